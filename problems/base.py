"""``Problem`` and ``Text2TextProblem``: what a problem knows, and datagen for text-to-text ones.

A problem knows its raw sources, how to build its vocabulary, how to encode examples, its splits and
eval metrics (T2T's ``Problem`` contract, ``tensor2tensor/data_generators/problem.py``).
``Text2TextProblem`` subclasses only say where each split's parallel text comes from
(``split_sources``); datagen does the rest:

1. vocab ``data_dir/vocab.<name>.<size>.subwords``: loaded if present, else built from a
   sample of the training text (T2T's ~1 MB per file) and stored atomically;
2. every pair encoded with EOS appended to both sides, on all cores;
3. T2T's shards ``<name>-<split>-NNNNN-of-MMMMM``: pairs dealt round-robin, then every shard
   shuffled in order from one ``random.Random(--random_seed)`` (``data/datagen_engine.py``,
   ``data/t2t_shards.py``: T2T's ``generate_files`` and ``shuffle_dataset``).

Datagen is idempotent: finished shards are kept and only missing ones are written (the same
bytes as one uninterrupted run). The manifest ``<name>.datagen.json`` records the vocab hash,
``max_cases`` and seed that the shards were made with, and a vocab built by a ``--max_cases``
trial is marked by a ``<vocab>.max_cases`` file, so trial shards or vocabs and shards of an
older vocab are never mistaken for finished ones. Empty pairs are dropped and undecodable bytes
replaced; both are counted in the ``DatagenSummary``.
"""

from __future__ import annotations

import dataclasses
import os
import random
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from t2t_repro import fileio, registry
from t2t_repro.data import datagen_engine, datagen_lib, records
from t2t_repro.data.pair_sources import PairSource, check_all
from t2t_repro.data.text_files import DataError, ReadStats
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

if TYPE_CHECKING:
    from t2t_repro.metrics.dev_metric import DevMetric

__all__ = ["DataError", "DatagenSummary", "Problem", "Text2TextProblem"]

DEFAULT_SEED = datagen_lib.DEFAULT_SEED


@dataclasses.dataclass
class DatagenSummary:
    """What one ``generate_data`` call did."""

    problem: str
    data_dir: str
    vocab_file: str = ""
    vocab_size: int = 0
    vocab_built: bool = False
    pairs: dict = dataclasses.field(default_factory=dict)  # split -> pairs in the split's shards
    input_tokens: int = 0  # tokens written this run (EOS included)
    target_tokens: int = 0
    shards_written: int = 0
    shards_kept: int = 0  # finished shards found and left untouched
    dropped_empty: int = 0
    replaced_bytes: int = 0
    seconds: float = 0.0

    def format(self) -> str:
        pairs = ", ".join(f"{s} {n:,}" for s, n in self.pairs.items()) or "none"
        vocab = (
            f"{self.vocab_size:,} ({'built' if self.vocab_built else 'loaded'}: {self.vocab_file})"
        )
        return "\n".join(
            [
                f"problem:        {self.problem} -> {self.data_dir}",
                f"pairs:          {pairs}",
                f"tokens written: inputs {self.input_tokens:,}, targets {self.target_tokens:,}",
                f"vocab size:     {vocab}",
                f"shards:         {self.shards_written} written, {self.shards_kept} kept",
                f"dropped empty pairs: {self.dropped_empty:,}; "
                f"replaced undecodable bytes: {self.replaced_bytes:,}",
                f"time:           {self.seconds:.1f}s",
            ]
        )


class Problem:
    """A registered task: sources, vocabulary, encoding, splits, metrics (docs/problems.md).

    As T2T's ``Problem``, it owns its task's behaviour; the trainer, decoder, exporter and
    model ask it through these hooks and never branch on the task:

    - ``problem_hparams``: what the model learns of the data (vocab sizes, target space id,
      the targets' word slots), added to every run's hparams; model features such as
      ``slot_signal`` are asked for by hparams and read them.
    - ``dev_metric``: the dev examples the trainer decodes at every evaluation and their
      scorer (``metrics/dev_metric.py``); the trainer decodes, the problem never sees the model.
    - ``search_constraint``: what restricts the search (``decoding/constraints.py``), with
      the extra inputs it builds from the source lines.
    - ``train_augmentation``: a map over training batches (word dropout).
    - ``read_example_fn``: the problem's own reading of a record, a per-example map in the
      input pipeline (T2T's ``decode_example`` and ``preprocess_example``); a ``_rev``'s swap.
    - ``teacher_forced_metrics``: the eval metrics it lists beyond those always reported.
    """

    # Set only where the registered name is not the class's snake_case.
    problem_name: str | None = None
    num_shards: dict = {records.TRAIN: 10, records.DEV: 1, records.TEST: 1}
    approx_vocab_size: int = 2**15
    has_inputs: bool = True
    target_space_id: int = 0  # T2T HEAD leaves Text2TextProblem at SpaceID.GENERIC
    batch_size_multiplier: int = 1
    decode_defaults: dict = {}
    eval_metrics: tuple = ("accuracy", "accuracy_per_sequence", "neg_log_perplexity")
    # Whose vocab file this problem uses (a ``_rev`` shares its base's).
    vocab_name: str | None = None
    # T2T's packed records: several examples a row, this many ids at most (docs/packing.md).
    packed_length: int | None = None

    @property
    def name(self) -> str:
        cls = type(self)
        return cls.__dict__.get("problem_name") or registry.camelcase_to_snakecase(cls.__name__)

    @property
    def vocab_filename(self) -> str:
        return f"vocab.{self.vocab_name or self.name}.{self.approx_vocab_size}.subwords"

    @property
    def splits(self) -> tuple:
        return tuple(s for s in records.SPLITS if s in self.num_shards)

    def vocab_path(self, data_dir: str) -> str:
        return os.path.join(data_dir, self.vocab_filename)

    def generate_data(
        self, data_dir: str, tmp_dir: str, num_workers: int | None = None, **kwargs
    ) -> DatagenSummary:
        raise NotImplementedError

    def check_datagen(self) -> None:
        """Raises one line when ``generate_data`` cannot run; ``t2t-datagen`` asks every
        problem before it writes any problem's files."""

    def check_split_decodes(self) -> None:
        """Raises one line when a split's decodes (``source_lines``) cannot run; the trainer
        asks before training under ``--schedule=train_eval_and_decode``."""

    def check_export(self) -> None:
        """Raises one line when an export cannot serve the problem as T2T's would;
        ``t2t-exporter`` asks before it writes anything."""

    def get_encoders(self, data_dir: str) -> dict:
        path = self.vocab_path(data_dir)
        if not fileio.isfile(path):
            raise DataError(
                f"Vocabulary file {path} not found. Run: t2t-datagen --problem={self.name} "
                f"--data_dir={data_dir} --tmp_dir=<raw data dir>"
            )
        encoder = datagen_lib.load_vocab(path)
        return {"inputs": encoder, "targets": encoder}

    def target_slot_ids(self, data_dir: str) -> str:
        """``"first:end"``: the target ids that each fill one input word (the model's
        ``slot_signal``); "" when the targets have no such slots."""
        return ""

    def problem_hparams(self, data_dir: str, model_hparams=None) -> dict:
        """What the model learns of the problem (``hparams_lib.build.PROBLEM_HPARAMS``): vocabulary
        sizes, target space id and, when the targets have them, their word slots. Model
        features such as ``slot_signal`` are asked for by hparams and read these.
        ``model_hparams``: the run's model hparams (T2T's ``Problem.hparams(defaults,
        model_hparams)`` reads them; ``hparams_lib.build.model_hparams_for_problem``)."""
        input_size, target_size = self.vocab_sizes(data_dir)
        return dict(
            input_vocab_size=input_size,
            target_vocab_size=target_size,
            target_space_id=self.target_space_id,
            target_slot_ids=self.target_slot_ids(data_dir),
            has_input=None if self.has_inputs else False,
        )

    def stop_at_eos(self, data_dir: str, hparams=None) -> bool:
        """T2T's problem hparam: whether a one-row greedy evaluation ends at EOS
        (``eval_run_autoregressive``); T2T's ``Text2TextProblem`` sets it, as are these."""
        return True

    def max_length(self, hparams) -> int | None:
        """The longest example the trainer reads (T2T's ``Problem.max_length``); None: the
        input pipeline's default, the ``max_length`` hparam, else ``batch_size``."""
        return None

    def source_class_ids(self, data_dir: str) -> list[int] | None:
        """For a word-level source, each source id's shape-class id (``word_dropout_alpha``
        replaces words by it); None when the source has no classes."""
        return None

    # -- hooks: the task's own behaviour (docs/problems.md) ---------------------------------
    def scores_bleu(self) -> bool:
        """Whether the dev metric is BLEU (``eval_metrics`` names "bleu"; a language model,
        without inputs to decode from, has none)."""
        return "bleu" in self.eval_metrics and self.has_inputs

    def dev_metric(self, data_dir: str, hparams, num_examples: int) -> DevMetric | None:
        """What the trainer decodes and scores at every evaluation (``metrics/dev_metric.py``):
        sacreBLEU of the first ``num_examples`` dev examples when ``scores_bleu``, else nothing."""
        if not self.scores_bleu():
            return None
        if self.packed_length:
            print(
                f"no dev decodes: {self.name}'s dev records are packed, several examples a row "
                "(T2T decodes no packed example); decode its unpacked problem's instead",
                flush=True,
            )
            return None
        from t2t_repro.data.input_pipeline import EVAL, make_dataset
        from t2t_repro.metrics.dev_metric import DevBleu

        target_encoder = self.get_encoders(data_dir)["targets"]
        examples = make_dataset(
            self.filepattern(data_dir, records.DEV),
            EVAL,
            hparams,
            read_example=self.read_example_fn("infer", hparams),
            pack=False,  # the dev examples as they are (T2T decodes no packed example)
            split_targets=False,  # whole references
        )
        inputs, references = [], []
        for example in examples.unbatch().take(num_examples):
            inputs.append([int(i) for i in example["inputs"].numpy() if i])
            targets = [int(i) for i in example["targets"].numpy() if i and i != EOS_ID]
            references.append(target_encoder.decode(targets))
        return DevBleu(inputs, references)

    def search_constraint(self, data_dir: str, decode_hparams):
        """A ``decoding.constraints.SearchConstraint`` that masks the search's choices (the
        parsers' tree constraint), or None: unconstrained search."""
        return None

    def train_augmentation(self, data_dir: str, hparams, seed: int | None):
        """A map fn over training batches (``make_dataset(augment=...)``), or None. Here: word
        dropout (``data/word_dropout.py``) when ``word_dropout_alpha`` is set; it replaces words
        by their shape class (``source_class_ids``), so it needs a word-level source."""
        alpha = hparams.get("word_dropout_alpha", 0)
        if not alpha:
            return None
        from t2t_repro.data import word_dropout
        from t2t_repro.data.input_pipeline import list_shards

        class_ids = self.source_class_ids(data_dir)
        shards = list_shards(self.filepattern(data_dir, records.TRAIN))
        counts = (
            word_dropout.source_id_counts(shards, hparams.input_vocab_size) if class_ids else None
        )
        augment = word_dropout.make_word_dropout(class_ids, counts, alpha, seed)
        share = word_dropout.replaced_share(counts, class_ids, alpha)
        print(
            f"word dropout: alpha {alpha} replaces {share:.1%} of training source words", flush=True
        )
        return augment

    def read_example_fn(self, mode: str, hparams):
        """A map the input pipeline runs on every serialized record in place of its own parsing
        and truncation (``make_dataset(read_example=...)``): record -> dict of features with
        int ``inputs`` and ``targets`` vectors (or a ``tf.data.Dataset`` of such dicts).
        ``mode``: T2T's "train", "eval" or "infer" (dev decodes). None: the pipeline's own,
        with no extra map (every problem of this project but the ``_rev`` ones:
        ``reversed_problem.py``)."""
        return None

    def teacher_forced_metrics(self) -> tuple[str, ...]:
        """The metrics of ``eval_metrics.ON_REQUEST`` (top-5 accuracy, ROUGE) that the
        teacher-forced evaluation computes for this problem: those ``eval_metrics`` lists."""
        from t2t_repro.metrics.eval_metrics import on_request

        return on_request(self.eval_metrics)

    def vocab_sizes(self, data_dir: str) -> tuple[int, int]:
        enc = self.get_encoders(data_dir)
        return enc["inputs"].vocab_size, enc["targets"].vocab_size

    def filepattern(self, data_dir: str, split: str) -> str:
        return records.filepattern(data_dir, self.name, split)

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        raise NotImplementedError


class Text2TextProblem(Problem):
    """Parallel text -> shared subword vocab -> EOS-terminated id pairs. Subclasses give
    ``split_sources``."""

    eval_metrics = ("accuracy", "accuracy_per_sequence", "neg_log_perplexity", "bleu")
    max_subtoken_length: int | None = 200
    vocab_byte_budget: float = 1e6  # per file, as T2T's generate_lines_for_vocab
    reverse: bool = False  # set on ``<name>_rev`` problems: inputs and targets swapped
    chunk_size: int = 2000  # pairs per work item for the encoding pool

    # -- what subclasses provide --------------------------------------------------------------
    def split_sources(self, tmp_dir: str, split: str) -> list[PairSource]:
        """The sources of one split, in order (raise DataError with instructions if unavailable)."""
        raise NotImplementedError

    def vocab_sources(self, tmp_dir: str) -> list[PairSource]:
        return self.split_sources(tmp_dir, records.TRAIN)

    # -- reading ------------------------------------------------------------------------------
    def iter_pairs(
        self, sources: list[PairSource], stats: ReadStats, max_cases: int | None = None
    ) -> Iterator[tuple[str, str]]:
        """Non-empty (input, target) text pairs of the sources; empty ones dropped and counted."""
        n = 0
        for source in sources:
            for src, tgt in source.pairs(stats):
                if max_cases is not None and n >= max_cases:
                    return
                if not src or not tgt:
                    stats.dropped_empty += 1
                    continue
                n += 1
                yield (tgt, src) if self.reverse else (src, tgt)

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        pairs = list(self.iter_pairs(self.split_sources(tmp_dir, split), ReadStats()))
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def vocab_lines(self, tmp_dir: str, max_cases: int | None = None) -> Iterator[str]:
        sources = self.vocab_sources(tmp_dir)
        if max_cases is not None:  # a quick trial: the vocab sees only the pairs it will encode
            for src, tgt in self.iter_pairs(sources, ReadStats(), max_cases):
                yield src
                yield tgt
            return
        for source in sources:
            yield from source.vocab_lines(self.vocab_byte_budget)

    # -- datagen ------------------------------------------------------------------------------
    def generate_data(
        self,
        data_dir: str,
        tmp_dir: str,
        num_workers: int | None = None,
        *,
        max_cases: int | None = None,
        random_seed: int = DEFAULT_SEED,
        progress: bool = True,
    ) -> DatagenSummary:
        """Vocab, then T2T's shards of every split (``data/datagen_engine.py``): missing
        shards written, finished ones kept."""
        start = time.monotonic()
        fileio.makedirs(data_dir)
        summary = DatagenSummary(self.name, data_dir)
        vocab_path = summary.vocab_file = self.vocab_path(data_dir)
        need_vocab = not datagen_lib.vocab_is_current(vocab_path, max_cases)
        run = datagen_engine.ShardRun.of_splits(
            data_dir, self.name, {s: self.num_shards[s] for s in self.splits}
        )
        trusted = not need_vocab and run.manifest_matches(vocab_path, max_cases, random_seed)
        summary.shards_kept = run.plan(trusted)
        todo = {split: run.todo_of(split) for split in run.splits if run.todo_of(split)}

        # Resolve and check every source we will read before any expensive step.
        split_sources = {split: self.split_sources(tmp_dir, split) for split in todo}
        expected = {split: check_all(src) for split, src in split_sources.items()}
        if need_vocab:
            if records.TRAIN not in split_sources:
                check_all(self.vocab_sources(tmp_dir))
            if progress:
                print(
                    f"{self.name}: building vocab {vocab_path} "
                    f"(target size {self.approx_vocab_size})",
                    file=sys.stderr,
                    flush=True,
                )
        encoder, summary.vocab_built = datagen_lib.keep_or_build_vocab(
            vocab_path,
            max_cases,
            datagen_lib.load_vocab,
            lambda path: datagen_lib.build_vocab(
                path,
                self.vocab_lines(tmp_dir, max_cases),
                self.approx_vocab_size,
                self.max_subtoken_length,
            ),
        )
        summary.vocab_size = encoder.vocab_size
        if not todo:
            summary.pairs = run.kept_pairs()
            summary.seconds = time.monotonic() - start
            return summary
        stats, counts = ReadStats(), datagen_engine.PairCounts()
        for split, shards in todo.items():
            n = expected[split]
            n = n if n is None or max_cases is None else min(n, max_cases)
            datagen_engine.write_text_pairs(
                self.iter_pairs(split_sources[split], stats, max_cases),
                run.split_paths(split),
                shards,
                vocab_path,
                counts,
                num_workers,
                self.chunk_size,
                n,
                datagen_lib.Progress(f"{self.name} {split}", n, enabled=progress),
            )
        manifest = dict(
            vocab_file=self.vocab_filename,
            vocab_sha256=datagen_lib.file_sha256(vocab_path),
            max_cases=max_cases,
            seed=random_seed,
        )
        summary.pairs = run.finish(random.Random(random_seed), manifest)
        summary.shards_written = len(run.todo)
        summary.input_tokens, summary.target_tokens = counts.input_tokens, counts.target_tokens
        summary.dropped_empty, summary.replaced_bytes = stats.dropped_empty, stats.replaced_bytes
        summary.seconds = time.monotonic() - start
        return summary
