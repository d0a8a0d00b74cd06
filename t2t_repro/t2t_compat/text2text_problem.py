"""T2T 1.15's ``Text2TextProblem`` (``data_generators/text_problems.py``), with T2T's interface
and defaults, on this project's ``Problem`` (``t2t_compat/problem.py``); ``text_problems``
names it for a usr_dir, beside the problem kinds built on it.

A subclass gives ``generate_samples`` and ``is_generate_per_split`` (and optionally
``dataset_splits``, ``vocab_type``, ``approx_vocab_size``...); datagen is T2T's own algorithm
on the project's engine (``t2t_compat/datagen.py``); the trainer and decoder reach it through
the project's hooks (``get_encoders``, ``problem_hparams``, ``filepattern``, ``source_lines``).
With ``packed_length`` datagen packs each shard's shuffled records as T2T's ``_pack_fn`` does
(``data/example_packing.py``) and the reading spec, ``max_length`` and hparams are T2T's packed
ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.data import example_packing, records, t2t_shards
from t2t_repro.data.text_files import DataError
from t2t_repro.metrics import eval_metrics
from t2t_repro.t2t_compat import (
    example_reading,
    generator_utils,
    problem_hparams,
    rev_variant,
    text_encoder,
)
from t2t_repro.t2t_compat.datagen import generate_t2t_data
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import (
    APPROX_BLEU,
    DatasetSplit,
    Problem,
    T2TProblemError,
    split_file_name,
    t2t_split,
)
from t2t_repro.t2t_compat.text_iterators import text2text_generate_encoded

# The two features T2T's packed examples add for each packed one (generator_utils.py).
PACKED_FIELDS = ("segmentation", "position")


class VocabType:
    CHARACTER = "character"
    SUBWORD = "subwords"
    TOKEN = "tokens"


class Text2TextProblem(Problem):
    """T2T's base class of text-to-text problems (``text_problems.py``, ``Text2TextProblem``)."""

    # What T2T cannot give this project's model (trainer, decoder); the refusing subclasses
    # below set it. ``datagen_as_t2t``: whether datagen still writes T2T's files (it does for
    # a language model and a classifier; not for real-valued targets or a context feature).
    unsupported: str | None = None
    datagen_as_t2t = True

    # -- the subclass interface, T2T's defaults ----------------------------------------------
    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 100},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def is_generate_per_split(self) -> bool:
        raise NotImplementedError()

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        raise NotImplementedError()

    @property
    def vocab_type(self) -> str:
        return VocabType.SUBWORD

    @property
    def approx_vocab_size(self) -> int:
        return 2**15

    @property
    def additional_reserved_tokens(self) -> list[str]:
        return []

    @property
    def oov_token(self) -> str | None:
        return None

    @property
    def max_samples_for_vocab(self) -> int | None:
        return None

    @property
    def packed_length(self) -> int | None:
        return None

    @property
    def packed_spacing(self) -> int:
        return 0

    @property
    def has_inputs(self) -> bool:
        return True

    @property
    def max_subtoken_length(self) -> int | None:
        return 200

    @property
    def batch_size_means_tokens(self) -> bool:
        return True

    @property
    def already_shuffled(self) -> bool:
        return False

    @property
    def inputs_prefix(self) -> str:
        return ""

    @property
    def targets_prefix(self) -> str:
        return ""

    @property
    def use_vocab_from_other_problem(self):
        return None

    def eval_metrics(self) -> list[str]:
        return super().eval_metrics() + [APPROX_BLEU, "rouge_2_fscore", "rouge_L_fscore"]

    def example_reading_spec(self) -> tuple[dict, None]:
        """T2T's: int64 ``targets``, and ``inputs`` only when ``has_inputs``; with
        ``packed_length`` also the packed examples' int64 ``<feature>_segmentation`` and
        ``<feature>_position`` of each feature read."""
        fields, decoders = example_reading.default_reading_spec(self.has_inputs)
        if self.packed_length:
            for feature in ("inputs", "targets") if self.has_inputs else ("targets",):
                for kind in PACKED_FIELDS:
                    fields[f"{feature}_{kind}"] = tf.io.VarLenFeature(tf.int64)
        return fields, decoders

    def max_length(self, model_hparams) -> int:
        """T2T's: ``packed_length`` when packed (every example is at most that long), else
        ``Problem``'s default."""
        return self.packed_length or super().max_length(model_hparams)

    def hparams(self, defaults, model_hparams) -> None:
        """T2T's (``text_problems.py``, ``Text2TextProblem.hparams``): symbol modalities, the
        encoders' sizes, and a loss multiplier of 2 for a CHARACTER vocabulary."""
        p = defaults
        p.stop_at_eos = int(True)
        p.modality = {"targets": ModalityType.SYMBOL}
        p.vocab_size = {"targets": self._encoders["targets"].vocab_size}
        if self.has_inputs:
            p.modality["inputs"] = ModalityType.SYMBOL
            p.vocab_size["inputs"] = self._encoders["inputs"].vocab_size
        if self.vocab_type == VocabType.CHARACTER:
            p.loss_multiplier = 2.0
        if self.packed_length:  # T2T's IDENTITY features of the packed examples
            for feature in ("inputs", "targets") if self.has_inputs else ("targets",):
                for kind in PACKED_FIELDS:
                    p.modality[f"{feature}_{kind}"] = ModalityType.IDENTITY
                    p.vocab_size[f"{feature}_{kind}"] = None

    # -- vocabulary ----------------------------------------------------------------------------
    @property
    def vocab_filename(self) -> str:
        other = self.use_vocab_from_other_problem
        if other:
            return other.vocab_filename
        if self.vocab_type == VocabType.SUBWORD:
            return f"vocab.{self.dataset_filename()}.{self.approx_vocab_size}.{VocabType.SUBWORD}"
        return f"vocab.{self.dataset_filename()}.{VocabType.TOKEN}"

    def generate_text_for_vocab(self, data_dir: str, tmp_dir: str) -> Iterator[str]:
        samples = self.generate_samples(data_dir, tmp_dir, DatasetSplit.TRAIN)
        for i, sample in enumerate(samples):
            yield from (sample[field] for field in self._vocab_fields())
            if self.max_samples_for_vocab and (i + 1) >= self.max_samples_for_vocab:
                break

    def _vocab_fields(self) -> tuple[str, ...]:
        """The sample fields whose text the vocabulary is built from."""
        return ("inputs", "targets") if self.has_inputs else ("targets",)

    def get_or_create_vocab(self, data_dir: str, tmp_dir: str | None, force_get: bool = False):
        kind = self.vocab_type
        if kind == VocabType.CHARACTER:
            return text_encoder.ByteTextEncoder()
        if not data_dir and (force_get or kind == VocabType.TOKEN):  # T2T's os.path.join(None,
            # ...) raises a TypeError (a vocabulary built with no data dir is kept in memory)
            raise T2TProblemError(
                f"{self.name}: its vocabulary file ({self.vocab_filename}) is read from a data "
                "dir, and none was given: pass data_dir (get_hparams reads the model hparams' "
                "data_dir, as T2T's)."
            )
        if kind == VocabType.SUBWORD:
            if force_get:
                path = os.path.join(data_dir, self.vocab_filename)
                if not fileio.isfile(path):
                    raise DataError(
                        f"Vocabulary file {path} not found. Run: t2t-datagen --problem="
                        f"{self.name} --data_dir={data_dir} --tmp_dir=<raw data dir> "
                        "--t2t_usr_dir=<your dir>"
                    )
                return text_encoder.SubwordTextEncoder(path)
            other = self.use_vocab_from_other_problem
            if other:
                return other.get_or_create_vocab(data_dir, tmp_dir, force_get)
            return generator_utils.get_or_generate_vocab_inner(
                data_dir,
                self.vocab_filename,
                self.approx_vocab_size,
                self.generate_text_for_vocab(data_dir, tmp_dir),
                max_subtoken_length=self.max_subtoken_length,
                reserved_tokens=text_encoder.RESERVED_TOKENS + self.additional_reserved_tokens,
            )
        if kind == VocabType.TOKEN:
            return text_encoder.TokenTextEncoder(
                os.path.join(data_dir, self.vocab_filename), replace_oov=self.oov_token
            )
        raise T2TProblemError(f"{type(self).__name__}: unknown vocab_type {kind!r}.")

    def feature_encoders(self, data_dir: str) -> dict:
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        encoders = {"targets": encoder}
        if self.has_inputs:
            encoders["inputs"] = encoder
        return encoders

    def generate_encoded_samples(
        self, data_dir: str, tmp_dir: str, dataset_split: str
    ) -> Iterator[dict]:
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)  # built now, as T2T does
        return text2text_generate_encoded(
            generator,
            encoder,
            has_inputs=self.has_inputs,
            inputs_prefix=self.inputs_prefix,
            targets_prefix=self.targets_prefix,
        )

    # T2T's own encoding of the samples' texts: datagen may run it in its encoding pool instead.
    get_or_create_vocab.pool_encodes = generate_encoded_samples.pool_encodes = True

    # -- packing (T2T's packed datasets) -----------------------------------------------------
    def _pack_fn(self) -> Callable[[list[bytes]], list[bytes]] | None:
        """T2T's (``text_problems.py``, ``_pack_fn``): None unless ``packed_length``; else what
        ``shuffle_dataset`` runs on each shard's shuffled records: their ``targets`` (and
        ``inputs`` when ``has_inputs``; any other feature is dropped) packed, serialized again."""
        if not self.packed_length:
            return None

        def pack_records(serialized: list[bytes]) -> list[bytes]:
            examples = []
            for record in serialized:
                feature = tf.train.Example.FromString(record).features.feature
                names = ("inputs", "targets") if self.has_inputs else ("targets",)
                examples.append({k: list(feature[k].int64_list.value) for k in names})
            packed = self._maybe_pack_examples(examples)
            return [records.serialize_example(x, allow_empty=False) for x in packed]

        return pack_records

    def _maybe_pack_examples(self, generator: Iterable[dict]) -> Iterable[dict]:
        """T2T's: the examples packed to ``packed_length`` with ``packed_spacing`` (a language
        model's sequences longer than it chopped), or as they are when not packed."""
        if not self.packed_length:
            return generator
        return example_packing.pack_examples(
            generator,
            self.has_inputs,
            self.packed_length,
            spacing=self.packed_spacing,
            chop_long_sequences=not self.has_inputs,
        )

    # -- the project's hooks -----------------------------------------------------------------
    def check_datagen(self) -> None:
        """One line naming the class when datagen cannot write T2T's files of this problem;
        ``t2t-datagen`` asks every problem before writing any."""
        name = f"{type(self).__name__} ({eval_metrics.tag_name(self)})"
        if self.unsupported and not self.datagen_as_t2t:
            raise T2TProblemError(f"{name}: {self.unsupported}")

    def check_runnable(self) -> None:
        """One line naming the class when the trainer or decoder cannot run this problem
        (its encoders are the first thing they ask for: ``get_encoders``)."""
        self.check_datagen()
        name = f"{type(self).__name__} ({eval_metrics.tag_name(self)})"
        if self.unsupported:
            raise T2TProblemError(f"{name}: {self.unsupported}")

    @property
    def num_shards(self) -> dict:
        return {split_file_name(s["split"]): s["shards"] for s in self.dataset_splits}

    def generate_data(self, data_dir, tmp_dir, task_id=-1, **tool_flags):
        """T2T's datagen of this problem (``t2t_compat/datagen.py``); the tools pass
        ``num_workers`` (where T2T has ``task_id``, which T2T's ``Text2TextProblem`` does not
        use), ``max_cases``, ``random_seed`` and ``progress``. Called by the problem's own
        ``generate_data`` (``super()``), which the tool runs on the generators it seeded, it
        continues from them, as T2T seeds once per problem, and records the tool's seed."""
        self.check_datagen()
        # the tools' num_workers; called by a problem's own generate_data inside a tool's run
        # (super()), the third argument is T2T's task id, which T2T's Text2TextProblem ignores
        called_by_t2t_code = t2t_shards.in_seeded_run()
        workers = task_id if task_id and task_id > 0 and not called_by_t2t_code else None
        if t2t_shards.in_seeded_run() and "random_seed" not in tool_flags:
            tool_flags = dict(tool_flags, random_seed=t2t_shards.tool_seed(), reseed=False)
        return generate_t2t_data(self, data_dir, tmp_dir, workers, **tool_flags)

    generate_data.t2t_tool_entry = True

    def get_encoders(self, data_dir: str) -> dict:
        """The problem's ``feature_encoders``, as T2T asks for them: a problem that supplies
        its own encoders needs no vocab file of T2T's name (T2T never looks for one); the
        default ones refuse a missing file in one line (``get_or_create_vocab``)."""
        self.check_runnable()
        encoders = self.feature_encoders(data_dir)
        self._encoders = encoders  # what T2T's hparams() reads (get_feature_encoders)
        # Without inputs (a language model) a prompt is encoded with the targets' encoder, as
        # T2T's decoding does (utils/decoding.py, decode_from_file: inputs_vocab_key).
        inputs = encoders["inputs"] if self.has_inputs else encoders["targets"]
        targets = self._label_names(encoders["targets"], data_dir)
        return self._tool_encoders({"inputs": inputs, "targets": targets})  # a _rev's: swapped

    def _label_names(self, targets: Any, data_dir: str) -> Any:
        """The targets' encoder; a label list's names for a multi-label usr_dir whose
        ``feature_encoders`` gives a list of encoders (one ``ClassLabelEncoder`` of each class
        name, as the public Jigsaw usr_dir does), which T2T's decoder cannot call ``decode``
        on: ``ClassLabelEncoder(class_labels(data_dir))``, as ``Text2ClassProblem`` builds it."""
        if isinstance(targets, (list, tuple)) and callable(getattr(self, "class_labels", None)):
            return text_encoder.ClassLabelEncoder(self.class_labels(data_dir))
        return targets

    def check_split_decodes(self) -> None:
        """A split's decodes read its text, not its records: refused in one line for a usr_dir
        that overrides what T2T's ``decode_from_dataset`` runs on the records."""
        self._refuse_record_hooks(
            "T2T runs on the split it decodes (decode_from_dataset); a split's decodes here "
            "read its text in --tmp_dir, where it cannot run: decode the split's inputs with "
            "--decode_from_file."
        )

    def check_export(self) -> None:
        """T2T's export runs ``decode_example`` and ``preprocess_example`` (PREDICT) on every
        served record (``problem.py``, ``serving_input_fn``); this project's export encodes
        text in its graph, where a usr_dir's override cannot run: refused in one line."""
        self._refuse_record_hooks(
            "T2T's export runs on every served record (serving_input_fn); this project's "
            "export encodes text in its graph, where it cannot run: serve with t2t-decoder "
            "instead."
        )

    def _refuse_record_hooks(self, why: str) -> None:
        """One line when the usr_dir overrides a hook T2T runs on records: ``why``."""
        for hook in ("decode_example", "preprocess_example"):
            if problem_hparams.defined_by_usr_dir(type(self), hook):
                raise T2TProblemError(
                    f"{problem_hparams.where(self)}: overrides {hook}, which {why}"
                )

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        """The raw (input, target) texts of a split, split as datagen splits them."""
        self.check_runnable()
        self.check_split_decodes()
        wanted = split_file_name(split)
        if self.is_generate_per_split:
            samples = self.generate_samples(None, tmp_dir, t2t_split(wanted))
            keep = None
        else:  # one stream dealt round-robin over every split's shards (generate_files)
            samples = self.generate_samples(None, tmp_dir, DatasetSplit.TRAIN)
            owners = [
                split_file_name(s["split"]) for s in self.dataset_splits for _ in range(s["shards"])
            ]
            keep = [owner == wanted for owner in owners]
        sources, targets = [], []
        for i, sample in enumerate(samples):
            if keep is None or keep[i % len(keep)]:
                if self.has_inputs:
                    sources.append(self.inputs_prefix + sample["inputs"])
                else:  # T2T decodes a language model's dev record from its targets (prompt)
                    sources.append(self.targets_prefix + sample["targets"])
                targets.append(self.targets_prefix + self.target_text(sample))
        # a _rev's texts swapped, a _copy's inputs twice, as its records (rev_variant.py)
        return rev_variant.variant_texts(self, sources, targets)

    def target_text(self, sample: dict) -> str:
        """A sample's target as text (a classifier's: its label's name)."""
        return sample["targets"]
