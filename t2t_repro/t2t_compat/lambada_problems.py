"""T2T 1.15's LAMBADA problems (``data_generators/lambada.py``) under T2T's names:
``lambada_lm`` / ``lambada_lm_control`` (a language model, ``Text2SelfProblem``) and
``lambada_rc`` / ``lambada_rc_control`` (the last word of a passage as a class label,
``Text2ClassProblem``, trained with ``--model=transformer_encoder``).

The corpus is T2T's ``lambada-dataset.tar.gz`` in --tmp_dir (downloaded there when missing),
extracted there with its inner ``train-novels.tar``; the vocabulary is T2T's: ``<UNK>`` then
the first 60,000 words of ``lambada-vocab-2.txt``, with no reserved tokens (so ids 0 and 1 are
``<UNK>`` and the most frequent word, as in T2T). T2T's quirk is kept: its ``_control``
variants set a ``control_set`` property that nothing reads, so they read the same files as
the plain ones (``use_control_set`` stays false).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.data.text_files import extract_all
from t2t_repro.t2t_compat import generator_utils, refusals, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_kinds import Text2ClassProblem, Text2SelfProblem

_UNK = "<UNK>"
_TAR = "lambada-dataset.tar.gz"
_URL = "http://clic.cimec.unitn.it/lambada/" + _TAR
_VOCAB = "lambada-vocab-2.txt"
_SPLITS = [
    {"split": DatasetSplit.TRAIN, "shards": 10},
    {"split": DatasetSplit.EVAL, "shards": 1},
    {"split": DatasetSplit.TEST, "shards": 1},
]


def _prepare_lambada_data(tmp_dir: str, data_dir: str | None, vocab_size: int, vocab: str) -> None:
    """T2T's ``_prepare_lambada_data``: the archive (and its train-novels.tar) extracted into
    tmp_dir, and the vocabulary written to data_dir unless there (csv-read, tab-separated)."""
    extract_all(generator_utils.maybe_download(tmp_dir, _TAR, _URL), tmp_dir)
    extract_all(os.path.join(tmp_dir, "train-novels.tar"), tmp_dir)
    if not data_dir:  # the decoder reading a split's text: no vocabulary to write
        return
    fileio.makedirs(data_dir)
    vocab_path = os.path.join(data_dir, vocab)
    if fileio.exists(vocab_path):
        return
    with tf.io.gfile.GFile(os.path.join(tmp_dir, _VOCAB), "r") as f:
        words = [row[0] for row in csv.reader(f, delimiter="\t")]
    with atomic_open(vocab_path, "w") as out:
        out.write("\n".join([_UNK, *words[:vocab_size]]))


def get_dataset_split(tmp_dir: str, split: str, use_control_set: bool) -> list[str]:
    """T2T's ``get_dataset_split``: every novel of train-novels/ for training; the
    development, test (or control, which has no test split) plain-text file otherwise."""
    if split == DatasetSplit.TRAIN:
        return list(tf.io.gfile.glob(os.path.join(tmp_dir, "train-novels/*/*.txt")))
    if use_control_set:
        names = {DatasetSplit.EVAL: "lambada_control_test_data_plain_text.txt"}
    else:
        names = {
            DatasetSplit.EVAL: "lambada_development_plain_text.txt",
            DatasetSplit.TEST: "lambada_test_plain_text.txt",
        }
    return [os.path.join(tmp_dir, names[split])]


def _lines(files: list[str]) -> Iterator[str]:
    for path in files:
        with tf.io.gfile.GFile(path, "r") as f:
            yield from f


class _Lambada:
    """What T2T's two LAMBADA classes share (lambada.py repeats it in each)."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [dict(s) for s in _SPLITS]

    @property
    def vocab_type(self) -> str:
        return VocabType.TOKEN

    @property
    def vocab_size(self) -> int:
        return 60000  # as in the LAMBADA paper's setup

    @property
    def oov_token(self) -> str:
        return _UNK

    @property
    def use_control_set(self) -> bool:
        return False

    @property
    def control_set(self) -> bool:
        return False

    def _files(self, data_dir: str | None, tmp_dir: str, split: str) -> list[str]:
        _prepare_lambada_data(tmp_dir, data_dir, self.vocab_size, self.vocab_filename)
        return get_dataset_split(tmp_dir, split, self.use_control_set)


@t2t_registry.register_problem
class LambadaLm(_Lambada, Text2SelfProblem):
    """LAMBADA as a language model: each line of the split's files, whitespace collapsed."""

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        files = self._files(data_dir, tmp_dir, dataset_split)
        return ({"targets": " ".join(line.split())} for line in _lines(files))


@t2t_registry.register_problem
class LambadaLmControl(LambadaLm):
    """T2T's control variant: ``control_set`` true is T2T's intent, but T2T sets it false
    and reads ``use_control_set``, so this reads LambadaLm's files."""


@t2t_registry.register_problem
class LambadaRc(_Lambada, Text2ClassProblem):
    """LAMBADA as reading comprehension: a passage's words but the last as inputs, the last
    word as a class label of the word vocabulary (T2T's ``get_labels_encoder``)."""

    def get_labels_encoder(self, data_dir: str) -> text_encoder.TokenTextEncoder:
        """The labels are the words of the same vocabulary file (T2T's)."""
        path = os.path.join(data_dir, self.vocab_filename)
        return text_encoder.TokenTextEncoder(path, replace_oov=self.oov_token)

    @property
    def num_classes(self) -> int:
        raise NotImplementedError("lambada_rc's classes are its vocabulary's words")

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        files = self._files(data_dir, tmp_dir, dataset_split)  # now: the vocab file too
        return (
            {"inputs": " ".join(words[:-1]), "label": words[-1]}
            for words in (line.split() for line in _lines(files))
        )

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        samples = self.generate_samples(data_dir, tmp_dir, dataset_split)
        words = self.get_or_create_vocab(data_dir, tmp_dir)
        labels = self.get_labels_encoder(data_dir)
        for sample in samples:
            inputs = words.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": labels.encode(sample["label"])}

    def feature_encoders(self, data_dir: str) -> dict:
        words = self.get_or_create_vocab(data_dir, None, force_get=True)
        return {"inputs": words, "targets": self.get_labels_encoder(data_dir)}

    def target_text(self, sample: dict) -> str:
        return sample["label"]

    def hparams(self, defaults: Any, model_hparams: Any) -> None:
        """T2T's: symbol inputs, a class label over the label encoder's words."""
        del model_hparams
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
        p.vocab_size = {
            "inputs": self._encoders["inputs"].vocab_size,
            "targets": self._encoders["targets"].vocab_size,
        }


@t2t_registry.register_problem
class LambadaRcControl(LambadaRc):
    """T2T's control variant, as ``LambadaLmControl``: it sets ``control_set`` true, which
    nothing reads, so it reads LambadaRc's files."""

    @property
    def control_set(self) -> bool:
        return True


T2T_REGISTERED_PROBLEMS = (LambadaLm, LambadaLmControl, LambadaRc, LambadaRcControl)

# T2T's names of lambada.py this project does not provide: one line when called.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.lambada")
