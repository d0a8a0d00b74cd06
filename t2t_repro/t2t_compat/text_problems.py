"""``tensor2tensor.data_generators.text_problems`` for a T2T usr_dir: T2T 1.15's names of that
module (``text_problems.py``), each from the module that holds it here:

- ``Text2TextProblem`` and ``VocabType``: ``text2text_problem.py``;
- the text iterators (``txt_line_iterator``, ``text2text_txt_iterator``...):
  ``text_iterators.py``;
- T2T's registered ``Text2textTmpdir``, ``Text2textTmpdirTokens`` and ``Text2TextRemotedir``:
  ``tmpdir_problems.py``;
- ``Text2SelfProblem``, a language model: the Transformer's decoder alone (``has_input`` false);
- ``Text2ClassProblem``, a text classifier: T2T's ``transformer_encoder`` with a class-label
  target;
- the problem kinds this project's Transformer cannot train, below: the trainer and decoder
  refuse them in one line.
"""

from __future__ import annotations

from collections.abc import Iterator

from t2t_repro.t2t_compat import refusals, text_encoder
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType
from t2t_repro.t2t_compat.text_iterators import (
    text2text_distill_iterator,
    text2text_generate_encoded,
    text2text_txt_iterator,
    text2text_txt_tab_iterator,
    txt_line_iterator,
)
from t2t_repro.t2t_compat.tmpdir_problems import (
    Text2TextRemotedir,
    Text2textTmpdir,
    Text2textTmpdirTokens,
)

__all__ = [
    "QuestionAndContext2TextProblem",
    "Text2ClassProblem",
    "Text2RealProblem",
    "Text2SelfProblem",
    "Text2TextProblem",
    "Text2TextRemotedir",
    "Text2textTmpdir",
    "Text2textTmpdirTokens",
    "VocabType",
    "text2text_distill_iterator",
    "text2text_generate_encoded",
    "text2text_txt_iterator",
    "text2text_txt_tab_iterator",
    "txt_line_iterator",
]


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
            inputs = encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": [sample["label"]]}

    def feature_encoders(self, data_dir: str) -> dict:
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        labels = text_encoder.ClassLabelEncoder(self.class_labels(data_dir))
        return {"inputs": encoder, "targets": labels}

    def target_text(self, sample: dict) -> str:
        return self.class_labels(None)[sample["label"]]

    def scores_bleu(self) -> bool:
        """No dev BLEU: T2T lists approx_bleu_score (and ROUGE) for a classifier too, inherited
        from Text2TextProblem, but a one-label target has no 2-gram, so its BLEU is always 0."""
        return False

    def teacher_forced_metrics(self) -> tuple[str, ...]:
        return tuple(m for m in super().teacher_forced_metrics() if "rouge" not in m)

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


class Text2RealProblem(Text2TextProblem):
    datagen_as_t2t = False  # T2T's records hold real values as the target
    unsupported = "Text2RealProblem (regression) is not supported by this project's Transformer."


class QuestionAndContext2TextProblem(Text2TextProblem):
    datagen_as_t2t = False  # T2T's records hold a third feature, the context
    unsupported = (
        "QuestionAndContext2TextProblem needs a 'context' input, which this project's "
        "Transformer does not read; join the context to the inputs in a Text2TextProblem."
    )


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.text_problems")
