"""T2T 1.15's problem kinds built on ``Text2TextProblem`` (``data_generators/text_problems.py``),
which ``text_problems`` names for a usr_dir:

- ``Text2SelfProblem``, a language model: the Transformer's decoder alone (``has_input`` false);
- ``Text2ClassProblem``, a text classifier: T2T's ``transformer_encoder`` with a class-label
  target; ``TextConcat2ClassProblem``, one of several texts joined by a token;
- ``QuestionAndContext2TextProblem``, records with a third feature, ``context``: T2T's
  ``transformer`` never reads it (its body reads ``inputs`` and ``targets``), so it trains
  question -> answer here as in T2T, unless a ``preprocess_example`` (``squad_concat``'s)
  joins the context to the inputs in the input pipeline;
- ``Text2RealProblem``, which this project's Transformer cannot train: the trainer and
  decoder refuse it in one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from t2t_repro.t2t_compat import example_reading, text_encoder
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import DatasetSplit, Problem, T2TProblemError
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem

_RECORD_HOOKS = ("decode_example", "preprocess_example")  # T2T's problem.py, dataset


class Text2SelfProblem(Text2TextProblem):
    """T2T's language-model problems (targets only, ``text_problems.py``): the Transformer
    trains as T2T's decoder-only language model, and a decoded line is the prefix of the
    targets (``docs/language_models.md``)."""

    @property
    def has_inputs(self) -> bool:
        return False


class Text2ClassProblem(Text2TextProblem):
    """T2T's text classification (``text_problems.py``, ``Text2ClassProblem``): t2t-datagen
    writes T2T's records (the encoded inputs and EOS, the label as a one-id target); it trains
    with ``--model=transformer_encoder`` (``models/transformer_encoder.py``: T2T's encoder and
    class-label top) and decodes to ``ClassLabelEncoder``'s label names
    (``docs/classification.md``)."""

    @property
    def num_classes(self) -> int:
        raise NotImplementedError()

    def class_labels(self, data_dir: str) -> list[str]:
        del data_dir
        return [f"ID_{i}" for i in range(self.num_classes)]

    def _vocab_fields(self) -> tuple[str, ...]:
        return ("inputs",)  # T2T's generate_text_for_vocab: labels are not text

    def generate_encoded_samples(
        self, data_dir: str, tmp_dir: str, dataset_split: str
    ) -> Iterator[dict]:
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)  # built now, as T2T does
        for sample in generator:
            inputs = self._encoded_inputs(encoder, sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": [sample["label"]]}

    def _encoded_inputs(self, encoder: Any, inputs: Any) -> list[int]:
        """A sample's input ids before EOS: here its one text's."""
        return encoder.encode(inputs)

    def feature_encoders(self, data_dir: str) -> dict:
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        labels = text_encoder.ClassLabelEncoder(self.class_labels(data_dir))
        return {"inputs": encoder, "targets": labels}

    def example_reading_spec(self) -> tuple[dict, None]:
        """T2T's: int64 ``inputs`` and a one-id ``targets``."""
        fields = {
            "inputs": tf.io.VarLenFeature(tf.int64),
            "targets": tf.io.FixedLenFeature([1], tf.int64),
        }
        return fields, None

    def target_text(self, sample: dict) -> str:
        return self.class_labels(None)[sample["label"]]

    def scores_bleu(self) -> bool:
        """No dev decodes scored by BLEU (a label is no sentence); T2T's teacher-forced
        approx_bleu_score and ROUGE, which it lists for a classifier too (inherited from
        Text2TextProblem), are computed as T2T computes them on the argmax label."""
        return False

    def hparams(self, defaults, model_hparams) -> None:
        """T2T's (``Text2ClassProblem.hparams``): symbol inputs, a CLASS_LABEL target of
        ``num_classes`` (no loss multiplier, even for a CHARACTER vocabulary)."""
        del model_hparams
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
        p.vocab_size = {
            "inputs": self._encoders["inputs"].vocab_size,
            "targets": self.num_classes,
        }


class TextConcat2ClassProblem(Text2ClassProblem):
    """T2T's classifier of several texts (``text_problems.py``, ``TextConcat2ClassProblem``:
    an NLI pair, say): a sample's ``inputs`` is a list of texts, encoded one after another with
    the first id of ``CONCAT_TOKEN``'s encoding between two, then EOS."""

    CONCAT_TOKEN = "$"

    def generate_text_for_vocab(self, data_dir: str, tmp_dir: str) -> Iterator[str]:
        # T2T's loop, its break included: from sample max_samples_for_vocab on, only each
        # sample's first text reaches the vocabulary (the break leaves the inner loop only).
        samples = self.generate_samples(data_dir, tmp_dir, DatasetSplit.TRAIN)
        for i, sample in enumerate(samples):
            for text in sample["inputs"]:
                yield text
                if self.max_samples_for_vocab and (i + 1) >= self.max_samples_for_vocab:
                    break

    def _encoded_inputs(self, encoder: Any, inputs: Any) -> list[int]:
        """Each text's ids, ``CONCAT_TOKEN``'s first id between two (T2T's
        ``generate_encoded_samples``)."""
        ids: list[int] = []
        for index, text in enumerate(inputs):
            ids += encoder.encode(text)
            if index < len(inputs) - 1:
                ids.append(encoder.encode(self.CONCAT_TOKEN)[0])
        return ids

    def check_split_decodes(self) -> None:
        """A split's decodes encode its input text as one text, which would not be the ids
        its records hold (each text encoded alone, ``CONCAT_TOKEN``'s id between them)."""
        raise T2TProblemError(
            f"{type(self).__name__} ({self.name}): its inputs are several texts joined by "
            f"{self.CONCAT_TOKEN!r}'s id, which a split's decodes (the split's text encoded "
            "as one) cannot give; decode with --decode_from_file."
        )


class QuestionAndContext2TextProblem(Text2TextProblem):
    """T2T's question answering (``text_problems.py``, ``QuestionAndContext2TextProblem``): a
    sample's ``context`` text is written as a third feature (encoded, then EOS), and T2T's
    problem hparams name it a SYMBOL modality, which T2T's transformer embeds at most and
    never reads (``models/transformer.py``; ``problem_hparams.to_run_hparams`` accepts it)."""

    QUESTION_SEPARATOR = "<EOQ>"
    QUESTION_SEPARATOR_ID = 2  # its id: the first after T2T's RESERVED_TOKENS (PAD, EOS)

    @property
    def additional_reserved_tokens(self) -> list[str]:
        return [self.QUESTION_SEPARATOR]

    def feature_encoders(self, data_dir: str) -> dict:
        encoders = super().feature_encoders(data_dir)
        encoders["context"] = encoders["inputs"]
        return encoders

    def _vocab_fields(self) -> tuple[str, ...]:
        # T2T's generate_text_for_vocab: each sample's inputs, context, then targets
        return ("inputs", "context", "targets")

    def generate_encoded_samples(
        self, data_dir: str, tmp_dir: str, dataset_split: str
    ) -> Iterator[dict]:
        """T2T's: the inputs and targets as Text2TextProblem's, the context with the vocab file
        read back (``feature_encoders``), then EOS."""
        generator = super().generate_encoded_samples(data_dir, tmp_dir, dataset_split)
        vocab = self.feature_encoders(data_dir)["context"]
        for sample in generator:
            sample["context"] = vocab.encode(sample["context"]) + [text_encoder.EOS_ID]
            yield sample

    def hparams(self, defaults, model_hparams) -> None:
        """T2T's: Text2TextProblem's, plus a SYMBOL ``context`` of the inputs' vocab size;
        T2T's NotImplementedError with ``packed_length``."""
        super().hparams(defaults, model_hparams)
        p = defaults
        p.modality["context"] = ModalityType.SYMBOL
        p.vocab_size["context"] = self._encoders["context"].vocab_size
        if self.packed_length:  # T2T's own refusal, with its error
            raise NotImplementedError("QuestionAndContext2Text does not support packed_length")

    def example_reading_spec(self) -> tuple[dict, None]:
        """T2T's: Text2TextProblem's fields and an int64 ``context``."""
        fields, decoders = super().example_reading_spec()
        fields["context"] = tf.io.VarLenFeature(tf.int64)
        return fields, decoders

    # -- the project's hooks -----------------------------------------------------------------
    def _reads_records_itself(self) -> bool:
        """Whether a subclass (t2t_compat's ``squad_concat`` too) overrides T2T's record hooks,
        which may read ``context``: then the pipeline runs them, as T2T's ``dataset`` does."""
        cls = type(self)
        return any(getattr(cls, h) is not getattr(Problem, h) for h in _RECORD_HOOKS)

    def read_example_fn(self, mode: str, hparams: Any):
        """T2T's reading (``decode_example``, ``preprocess_example``) when a subclass overrides
        it; else the pipeline's, which reads ``inputs`` and ``targets`` only: ``context`` is
        dropped, as T2T's transformer never reads it."""
        if not self._reads_records_itself():
            return super().read_example_fn(mode, hparams)
        read = example_reading.read_example_fn(self, mode, hparams)
        if self._was_reversed or self._was_copy:  # T2T's dataset: maybe_reverse_and_copy
            read = example_reading.then_map(read, self.maybe_reverse_and_copy)
        return read

    def check_split_decodes(self) -> None:
        """A split's decodes encode its question text: refused when a record hook may join the
        context to it, which T2T's decode_from_dataset runs on the split's records."""
        super().check_split_decodes()
        if self._reads_records_itself():
            raise T2TProblemError(
                f"{type(self).__name__} ({self.name}): its inputs are made from the records "
                "(preprocess_example: the question, <EOQ>'s id, the context), which a split's "
                "decodes (its question text) cannot give; decode with --decode_from_file "
                "(questions only, as T2T's decode_from_file gives)."
            )

    def check_export(self) -> None:
        """T2T's export runs the record hooks on each served record (with its context); this
        project's export encodes the question text alone: refused when they are overridden."""
        super().check_export()
        if self._reads_records_itself():
            raise T2TProblemError(
                f"{type(self).__name__} ({self.name}): T2T's export runs preprocess_example on "
                "each served record (its context too); this project's export serves text "
                "inputs only: serve with t2t-decoder instead."
            )


class Text2RealProblem(Text2TextProblem):
    datagen_as_t2t = False  # T2T's records hold real values as the target
    unsupported = "Text2RealProblem (regression) is not supported by this project's Transformer."
