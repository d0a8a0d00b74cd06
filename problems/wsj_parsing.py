"""WSJ constituency parsing (paper Table 4) as sequence-to-sequence: words -> linearised tree.

Trees come from the treebank's ``.mrg`` files found in ``--tmp_dir`` (``parsing.wsj_splits``: the
LDC layout gives sections 02-21 / 22 / 23, the NLTK sample gives wsj_0001-0179 / 0180-0189 /
0190-0199), are normalised (traces, function tags and the empty root removed) and linearised exactly
as T2T does (``parsing.linearize``; ``tensor2tensor/data_generators/wsj_parsing.py``,
``words_and_tags_from_wsj_tree``): source = the words, target = ``S NP DT NN /NP VP VBD /VP . /S``.
Malformed trees are skipped, counted and reported with ``file:line`` on stderr.

The source vocab is a subword vocabulary, as in the paper-era T2T problems
``wsj_parsing_tokens_16k``/``_32k`` (T2T ``data_generators/wsj_parsing.py``): the paper's "16K
vocab" is the source (word) vocab, 2**14, stored as ``vocab.<name>.inputs.<size>.subwords``. The
target vocab gives one id to every label, closer and POS tag (``TokenTextEncoder``,
``vocab.<name>.targets.tokens``: the PTB inventory, then other training tokens), which the
tree-constrained search needs; T2T's 2**9 subword target vocab split closers into two ids.
Decoding defaults are the paper's: beam 21, alpha 0.3, maximum length input + 300, plus the
tree constraint (``parsing/tree_constraint.py``; off with ``tree_constraint=False``).
Datagen also writes, for dev and test, ``<name>.<split>.words`` (to decode) and
``<name>.<split>.trees`` (the gold trees for ``t2t-evalb``) into ``--data_dir``.

* ``wsj_parsing_ldc``: WSJ only; the LDC layout if present, else the NLTK sample split (a note
  says so). T2T's own ``wsj_parsing`` reads T2T's tree files instead (t2t_compat/wsj_parsing.py).
* ``wsj_parsing_ptb_sample``: always the NLTK sample split; source vocab 2**12 fits its ~3.5K
  training sentences (~11K word types, so rare words get split into subwords).
* ``wsj_parsing_words``, ``wsj_parsing_ptb_sample_words``: the same data with one source id
  per word (``text_encoding/word_encoder.py``), so that input position k is word k, which the
  decoder's ``slot_signal`` points at.
* ``wsj_parsing_semisup``: the paper's semi-supervised setting, source vocab 2**15 (32K). Its
  training split is WSJ 02-21 plus every file in ``tmp_dir/semisup/`` (sorted by name): extra
  parsed sentences, one bracketed tree per line, plain or gzip (e.g. the high-confidence and
  BerkeleyParser corpora, not distributed here). Dev and test stay WSJ 22 and 23. The vocabs
  see WSJ train plus the first ``vocab_extra_trees`` extra trees.
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator

from t2t_repro import fileio, registry
from t2t_repro.atomic_write import atomic_open
from t2t_repro.builtin.problems.base import DatagenSummary, Problem
from t2t_repro.data import datagen_engine, datagen_lib, records, t2t_shards
from t2t_repro.data.text_files import DataError, read_lines
from t2t_repro.parsing import wsj_splits
from t2t_repro.parsing.linearize import PTB_POS_TAGS, PUNCTUATION_TAGS, linearize, target_inventory
from t2t_repro.parsing.tree_files import TreeItem, TreeReadStats, write_tree_lines
from t2t_repro.parsing.trees import Tree, TreeParseError, normalize, parse_tree
from t2t_repro.text_encoding.reserved_tokens import EOS_ID
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder
from t2t_repro.text_encoding.token_encoder import TokenTextEncoder
from t2t_repro.text_encoding.word_encoder import WordTextEncoder, build_word_vocab

DEFAULT_SEED = datagen_lib.DEFAULT_SEED
CHUNK = 1000  # pairs encoded per batch


def _write_lines(path: str, lines: Iterable[str]) -> None:
    with atomic_open(path) as f:
        f.writelines(line + "\n" for line in lines)


class WsjParsingProblem(Problem):
    """Linearised WSJ trees: a source vocab (subwords or words) and a target token vocab
    (module docstring). Vocabularies and shards go through the same ``datagen_lib`` paths as
    every problem's (``keep_or_build_vocab``, ``datagen_engine``); the tree constraint's run
    limits are stored beside them (``<name>.constraint.json``)."""

    layout = "auto"  # or wsj_splits.LDC / wsj_splits.PTB_SAMPLE
    approx_vocab_size = 2**14
    max_subtoken_length: int | None = 200
    vocab_extra_trees = 100_000  # extra (semi-supervised) trees the vocabs see, after WSJ train
    num_shards = {records.TRAIN: 10, records.DEV: 1, records.TEST: 1}
    target_space_id = 15  # T2T's parsing_english_ptb* (data_generators/problem_hparams.py)
    # "subwords" (T2T's) or "words": one id per word, rare words as shape classes
    # (text_encoding/word_encoder.py), so input position k is word k.
    source_vocab = "subwords"
    word_min_count = 2
    # tree_constraint: only well-formed trees over the input's words (parsing/tree_constraint.py);
    # tree_renormalize: renormalise over the allowed tokens (not by default: label bias).
    decode_defaults = {
        "beam_size": 21,
        "alpha": 0.3,
        "extra_length": 300,
        "tree_constraint": True,
        "tree_renormalize": False,
    }
    eval_metrics = ("accuracy", "accuracy_per_sequence", "neg_log_perplexity", "parse_f1")

    @property
    def vocab_filename(self) -> str:
        if self.source_vocab == "words":
            return f"vocab.{self.name}.inputs.words"
        return f"vocab.{self.name}.inputs.{self.approx_vocab_size}.subwords"

    @property
    def target_vocab_filename(self) -> str:
        """One token per line (``TokenTextEncoder``): every label, closer and POS tag is one id."""
        return f"vocab.{self.name}.targets.tokens"

    def constraint_limits_path(self, data_dir: str) -> str:
        """``<name>.constraint.json``: the tree constraint's run limits, written by datagen."""
        return os.path.join(data_dir, f"{self.name}.constraint.json")

    def constraint_limits(self, data_dir: str) -> dict:
        """The run limits datagen computed from the training trees (``run_limits``); {} for a
        data dir made before (the constraint then uses the PTB sample's)."""
        return datagen_lib.load_json(self.constraint_limits_path(data_dir)) or {}

    def gold_file(self, data_dir: str, split: str, kind: str) -> str:
        """``<name>.<split>.trees`` (gold trees) or ``<name>.<split>.words`` (sentences), written by
        datagen."""
        return os.path.join(data_dir, f"{self.name}.{split}.{kind}")

    def target_slot_ids(self, data_dir: str) -> str:
        """The POS tags' ids, ``"first:end"``: ``target_inventory`` puts the tags first."""
        tokens = self.get_encoders(data_dir)["targets"].tokens
        ids = [i for i, t in enumerate(tokens) if t in PTB_POS_TAGS]
        if not ids or ids != list(range(ids[0], ids[-1] + 1)):
            raise DataError(
                f"{self.target_vocab_filename} in {data_dir} does not list the POS tags "
                "together; delete it and rerun t2t-datagen."
            )
        return f"{ids[0]}:{ids[-1] + 1}"

    def source_class_ids(self, data_dir: str) -> list[int] | None:
        """Words' shape classes (punctuation stays itself: its tag depends on it)."""
        if self.source_vocab != "words":
            return None
        return self.get_encoders(data_dir)["inputs"].class_ids(PUNCTUATION_TAGS)

    # -- hooks (problems/base.py) -------------------------------------------------------------
    def dev_metric(self, data_dir: str, hparams, num_examples: int):
        """Strict EVALB F1 of the first ``num_examples`` dev sentences' decodes
        (``parsing/dev_metric.py``)."""
        from t2t_repro.parsing.dev_metric import DevParseF1
        from t2t_repro.parsing.tree_files import read_trees

        words_path = self.gold_file(data_dir, records.DEV, "words")
        trees_path = self.gold_file(data_dir, records.DEV, "trees")
        for path in (words_path, trees_path):
            if not fileio.isfile(path):
                raise DataError(
                    f"dev F1 needs {path}; rerun t2t-datagen --problem={self.name} "
                    f"--data_dir={data_dir} (or pass --eval_decode_examples=0)."
                )
        sentences = list(read_lines(words_path))[:num_examples]
        return DevParseF1(sentences, read_trees(trees_path)[: len(sentences)])

    def search_constraint(self, data_dir: str, decode_hparams):
        """The tree constraint (``parsing/tree_constraint.py``) unless ``tree_constraint=False``,
        with the run limits of the training treebank (``run_limits``)."""
        from t2t_repro.parsing.tree_constraint import tree_constraint_for

        encoders = self.get_encoders(data_dir)
        return tree_constraint_for(
            encoders["targets"],
            decode_hparams,
            self.constraint_limits(data_dir),
            input_encoder=encoders["inputs"],
            one_id_per_word=self.source_vocab == "words",
        )

    # -- raw data -----------------------------------------------------------------------------
    def gold_trees(
        self, tmp_dir: str, split: str, stats: TreeReadStats | None = None
    ) -> list[Tree]:
        """Normalised gold trees of a WSJ split (what ``t2t-evalb`` scores against)."""
        stats = stats if stats is not None else TreeReadStats()
        files = wsj_splits.find_mrg_files(tmp_dir)
        if not files:
            raise DataError(
                f"{self.name}: no wsj_NNNN.mrg files under {tmp_dir}. "
                + wsj_splits.missing_help(tmp_dir)
            )
        layout = wsj_splits.detect_layout(files) if self.layout == "auto" else self.layout
        if self.layout == "auto" and layout == wsj_splits.PTB_SAMPLE and split == records.TRAIN:
            print(
                f"{self.name}: only the NLTK sample (wsj_0001-0199) is in {tmp_dir}; using its "
                "split 0001-0179 / 0180-0189 / 0190-0199 instead of sections 02-21 / 22 / 23.",
                file=sys.stderr,
            )
        chosen = wsj_splits.split_files(files, split, layout)
        return list(wsj_splits.normalized(wsj_splits.iter_raw_trees(chosen, stats), stats))

    def extra_train_pairs(self, tmp_dir: str, stats: TreeReadStats) -> Iterator[tuple[str, str]]:
        """Training pairs beyond the treebank's (none here; see ``wsj_parsing_semisup``). Missing
        data must raise DataError when this is called, not when the iterator is consumed."""
        return iter(())

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        """(sentences, linearised gold trees) of a split; ``gold_trees`` gives the trees
        themselves."""
        pairs = [linearize(tree) for tree in self.gold_trees(tmp_dir, split)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    # -- vocabularies -------------------------------------------------------------------------
    def get_encoders(self, data_dir: str) -> dict:
        paths = [
            os.path.join(data_dir, f) for f in (self.vocab_filename, self.target_vocab_filename)
        ]
        for path in paths:
            if not fileio.isfile(path):
                raise DataError(
                    f"Vocabulary file {path} not found. Run: t2t-datagen --problem={self.name} "
                    f"--data_dir={data_dir} --tmp_dir=<folder with the treebank's .mrg files>"
                )
        inputs = (
            WordTextEncoder(paths[0])
            if self.source_vocab == "words"
            else datagen_lib.load_vocab(paths[0])
        )
        return {"inputs": inputs, "targets": TokenTextEncoder(paths[1])}

    def _vocabs(
        self, data_dir: str, pairs: Callable[[], Iterator[tuple[str, str]]], max_cases, summary
    ) -> tuple:
        """(source, target) encoders: each file kept if present, unless a ``--max_cases``
        trial of another size made it (``datagen_lib.keep_or_build_vocab``). The target vocab
        is the Penn Treebank's labels, closers and tags, then any other token of the training
        targets (most frequent first)."""
        words = self.source_vocab == "words"

        def build_source(path: str):
            lines = (p[0] for p in pairs())
            if not words:
                return datagen_lib.build_vocab(
                    path, lines, self.approx_vocab_size, self.max_subtoken_length
                )
            encoder = WordTextEncoder(
                tokens=build_word_vocab(lines, self.word_min_count, PUNCTUATION_TAGS)
            )
            encoder.store_to_file(path)
            return encoder

        def build_target(path: str) -> TokenTextEncoder:
            encoder = TokenTextEncoder(tokens=target_inventory(p[1] for p in pairs()))
            encoder.store_to_file(path)
            return encoder

        src_enc, src_built = datagen_lib.keep_or_build_vocab(
            os.path.join(data_dir, self.vocab_filename),
            max_cases,
            WordTextEncoder if words else datagen_lib.load_vocab,
            build_source,
        )
        tgt_enc, tgt_built = datagen_lib.keep_or_build_vocab(
            os.path.join(data_dir, self.target_vocab_filename),
            max_cases,
            TokenTextEncoder,
            build_target,
        )
        summary.vocab_built = src_built or tgt_built
        return src_enc, tgt_enc

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
        """Vocabs (kept if present), shuffled TFRecord shards and dev/test gold files. Encoding runs
        in this process (WSJ is small), so ``num_workers`` is unused."""
        start = time.monotonic()
        fileio.makedirs(data_dir)
        summary = DatagenSummary(self.name, data_dir)
        stats = TreeReadStats()
        self.extra_train_pairs(tmp_dir, stats)  # fails now if extra data is missing
        trees = {split: self.gold_trees(tmp_dir, split, stats)[:max_cases] for split in self.splits}
        train = [linearize(t) for t in trees[records.TRAIN]]

        def vocab_pairs() -> Iterator[tuple[str, str]]:
            yield from train
            budget = self.vocab_extra_trees if max_cases is None else max(0, max_cases - len(train))
            extra = self.extra_train_pairs(tmp_dir, TreeReadStats())
            yield from itertools.islice(extra, budget)

        src_enc, tgt_enc = self._vocabs(data_dir, vocab_pairs, max_cases, summary)
        from t2t_repro.parsing.tree_constraint import run_limits  # (TensorFlow: not at import)

        datagen_lib.store_json(
            self.constraint_limits_path(data_dir), run_limits(p[1] for p in train)
        )
        summary.vocab_size = src_enc.vocab_size
        summary.vocab_file = (
            f"{os.path.join(data_dir, self.vocab_filename)}; targets "
            f"{tgt_enc.vocab_size:,}: {self.target_vocab_filename}"
        )
        run = datagen_engine.ShardRun.of_splits(
            data_dir, self.name, {s: self.num_shards[s] for s in self.splits}
        )
        run.plan(trusted=False)
        for split in self.splits:
            pairs: Iterable[tuple[str, str]] = (
                train if split == records.TRAIN else map(linearize, trees[split])
            )
            if split == records.TRAIN:
                extra = self.extra_train_pairs(tmp_dir, stats)
                cap = None if max_cases is None else max(0, max_cases - len(train))
                pairs = itertools.chain(
                    train, extra if cap is None else itertools.islice(extra, cap)
                )
            self._write_split(
                run.split_paths(split), split, pairs, src_enc, tgt_enc, progress, summary
            )
            if split != records.TRAIN:
                write_tree_lines(self.gold_file(data_dir, split, "trees"), trees[split])
                _write_lines(
                    self.gold_file(data_dir, split, "words"),
                    (" ".join(t.words()) for t in trees[split]),
                )
        manifest = dict(vocab_file=self.vocab_filename, max_cases=max_cases, seed=random_seed)
        summary.pairs = run.finish(random.Random(random_seed), manifest)
        summary.shards_written = len(run.todo)
        if stats.malformed:
            print(f"{self.name}: warning: {stats.summary()}", file=sys.stderr)
        summary.dropped_empty, summary.replaced_bytes = stats.dropped_empty, stats.replaced_bytes
        summary.seconds = time.monotonic() - start
        return summary

    def _write_split(
        self,
        paths: list[str],
        split: str,
        pairs: Iterable[tuple[str, str]],
        src_enc: SubwordTextEncoder,
        tgt_enc: TokenTextEncoder,
        progress: bool,
        summary: DatagenSummary,
    ) -> None:
        """Encode ``pairs`` (EOS appended) round-robin into the split's unshuffled files
        (``t2t_shards.write_round_robin``, as every problem); the run shuffles them."""
        bar = datagen_lib.Progress(f"{self.name} {split}", None, enabled=progress)
        count = 0

        def encoded() -> Iterator[tuple[int, bytes]]:
            nonlocal count
            for chunk in datagen_lib.chunks(pairs, CHUNK):
                sources = src_enc.encode_batch([p[0] for p in chunk])
                targets = tgt_enc.encode_batch([p[1] for p in chunk])
                for src, tgt in zip(sources, targets, strict=True):
                    src, tgt = list(src) + [EOS_ID], list(tgt) + [EOS_ID]
                    yield count, records.serialize_example({"inputs": src, "targets": tgt})
                    summary.input_tokens += len(src)
                    summary.target_tokens += len(tgt)
                    count += 1
                bar.update(count)

        t2t_shards.write_round_robin(encoded(), paths)
        bar.close()


@registry.register_problem
class WsjParsingLdc(WsjParsingProblem):
    """WSJ only (paper Table 4, 16K vocab): LDC sections 02-21/22/23, or the NLTK sample split.
    Not T2T's ``wsj_parsing``, which reads T2T's own tree files (t2t_compat/wsj_parsing.py)."""


@registry.register_problem
class WsjParsingPtbSample(WsjParsingProblem):
    """The NLTK 10% WSJ sample with its own split and small vocabs (trainable on a CPU)."""

    layout = wsj_splits.PTB_SAMPLE
    approx_vocab_size = 2**12
    num_shards = {records.TRAIN: 2, records.DEV: 1, records.TEST: 1}


@registry.register_problem
class WsjParsingWords(WsjParsingLdc):
    """``wsj_parsing_ldc`` with a word-level source vocabulary (one id per word, rare words as
    shape classes; ``wsj_parsing_ptb_sample_words`` explains why)."""

    source_vocab = "words"


@registry.register_problem
class WsjParsingPtbSampleWords(WsjParsingPtbSample):
    """The sample with a word-level source vocabulary (one id per word, rare words as shape
    classes): input position k is word k, which the decoder's slot signal can point at."""

    source_vocab = "words"


@registry.register_problem
class WsjParsingSemisup(WsjParsingProblem):
    """Semi-supervised (paper Table 4, 32K vocab): WSJ 02-21 plus ``tmp_dir/semisup/*`` trees."""

    layout = wsj_splits.LDC
    approx_vocab_size = 2**15
    num_shards = {records.TRAIN: 100, records.DEV: 1, records.TEST: 1}
    extra_dir = "semisup"

    def extra_files(self, tmp_dir: str) -> list[str]:
        folder = os.path.join(tmp_dir, self.extra_dir)
        files = (
            sorted(os.path.join(folder, n) for n in os.listdir(folder))
            if os.path.isdir(folder)
            else []
        )
        files = [f for f in files if os.path.isfile(f)]
        if not files:
            raise DataError(
                f"{self.name}: no extra parsed data in {folder}. Put files of bracketed "
                "trees there (one tree per line, plain or .gz), e.g. the paper's "
                "high-confidence/BerkeleyParser corpus."
            )
        return files

    def extra_train_pairs(self, tmp_dir: str, stats: TreeReadStats) -> Iterator[tuple[str, str]]:
        return self._extra_pairs(self.extra_files(tmp_dir), stats)

    def _extra_pairs(self, files: list[str], stats: TreeReadStats) -> Iterator[tuple[str, str]]:
        for path in files:
            for number, line in enumerate(read_lines(path, stats), 1):
                if not line:
                    continue
                try:
                    tree = normalize(parse_tree(line, number))
                except TreeParseError as e:
                    stats.record(TreeItem(path, number, error=str(e)))
                    continue
                stats.record(TreeItem(path, number, tree=tree))
                if tree is None:
                    stats.dropped_empty += 1
                    continue
                yield linearize(tree)
