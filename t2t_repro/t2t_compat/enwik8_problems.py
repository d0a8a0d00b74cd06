"""T2T 1.15's ``enwik8_l65k`` (``data_generators/enwik8.py``) under T2T's name: a character
language model (``Text2SelfProblem``, ``ByteTextEncoder``) on Hutter's enwik8, examples of up to
65,536 characters.

T2T's ``enwik8.zip`` is read from --tmp_dir (downloaded there when missing) and extracted there;
as T2T does, its text is read whole as UTF-8, its last 10M characters are dev (the first 5M of
them) and test (the last 5M), the rest trains, in windows of 65,536 characters that start every
16,384 (``DUPE_FACTOR`` 4) in train and every 65,536 in dev and test.
"""

from __future__ import annotations

import os
import zipfile

import tensorflow as tf

from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, TaskID
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_kinds import Text2SelfProblem

_URL = "http://mattmahoney.net/dc/enwik8.zip"
_TEST_CHARS = 5000000  # enwik8.py, generate_samples: num_test_chars


def _maybe_download_corpus(tmp_dir: str) -> str:
    """T2T's ``_maybe_download_corpus``: the zip extracted into tmp_dir; the text's path."""
    archive = generator_utils.maybe_download(tmp_dir, os.path.basename(_URL), _URL)
    with zipfile.ZipFile(archive, "r") as zipped:
        zipped.extractall(tmp_dir)
    return os.path.join(tmp_dir, "enwik8")


@t2t_registry.register_problem
class Enwik8L65k(Text2SelfProblem):
    """Enwik8, with examples up to 65,536 characters long (T2T's)."""

    DUPE_FACTOR = 4

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER

    def global_task_id(self) -> int:
        return TaskID.EN_CHR

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 16},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 1},
        ]

    def max_length(self, model_hparams) -> int:
        return self.sequence_length

    @property
    def sequence_length(self) -> int:
        """Length of each example (number of characters)."""
        return 65536

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        with tf.io.gfile.GFile(_maybe_download_corpus(tmp_dir)) as f:
            data = f.read()
        if dataset_split == DatasetSplit.TRAIN:
            part, step = data[: -2 * _TEST_CHARS], self.sequence_length // self.DUPE_FACTOR
        elif dataset_split == DatasetSplit.EVAL:
            part, step = data[-2 * _TEST_CHARS : -_TEST_CHARS], self.sequence_length
        elif dataset_split == DatasetSplit.TEST:
            part, step = data[-_TEST_CHARS:], self.sequence_length
        else:
            raise ValueError(f"Undefined dataset_split {dataset_split!r}")
        for start in range(0, len(part), step):
            yield {"targets": part[start : start + self.sequence_length]}

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        """T2T's: the characters' bytes, with no EOS appended."""
        samples = self.generate_samples(data_dir, tmp_dir, dataset_split)
        vocab = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in samples:
            yield dict(sample, targets=vocab.encode(sample["targets"]))


T2T_REGISTERED_PROBLEMS = (Enwik8L65k,)

# T2T's names of enwik8.py this project does not provide: one line when called.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.enwik8")
