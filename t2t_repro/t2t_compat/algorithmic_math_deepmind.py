"""``tensor2tensor.data_generators.algorithmic_math_deepmind``: T2T 1.15.7's
``algorithmic_math_deepmind_all``, DeepMind's Mathematics Dataset v1.0 as question -> answer
pairs with T2T's byte vocabulary.

``mathematics_dataset-v1.0.tar.gz`` (in --tmp_dir or downloaded there from T2T's address) is
extracted into --tmp_dir on every read, as T2T does; train reads the ``*.txt`` files of
``v1.0/train-easy``, ``train-medium``, ``train-hard`` (T2T's member paths), dev those of
``v1.0/interpolate`` and ``extrapolate``, folder by folder, files by name, each file's lines
taken two by two (question, answer; a last odd line is dropped). 128 train shards, 1 dev shard.

T2T reads the lines as bytes, and its encoding prepends a text prefix to them, which Python 3
refuses (TypeError): here they are UTF-8 text, which encodes to the ids its Python 2 code wrote.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.data.text_files import extract_all
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType

_URL = "https://storage.cloud.google.com/mathematics-dataset/mathematics_dataset-v1.0.tar.gz"
_TRAIN_DIRS = ("v1.0/train-easy", "v1.0/train-medium", "v1.0/train-hard")
_EVAL_DIRS = ("v1.0/interpolate", "v1.0/extrapolate")


def question_answer_pairs(path: str) -> Iterator[dict]:
    """A dataset file's lines two by two, stripped: the question, then its answer."""
    question = None
    with open(path, "rb") as f:
        for line in f:
            text = line.strip().decode("utf-8")
            if question is None:
                question = text
            else:
                yield {"inputs": question, "targets": text}
                question = None


@t2t_registry.register_problem
class AlgorithmicMathDeepmindAll(Text2TextProblem):
    """DeepMind Mathematics Dataset v1.0, all modules (T2T's ``AlgorithmicMathDeepmindAll``)."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 128},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def is_generate_per_split(self) -> bool:
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        # T2T's generate_samples: made folders, the archive extracted on every read.
        fileio.makedirs(tmp_dir)
        if data_dir:
            fileio.makedirs(data_dir)
        archive = generator_utils.maybe_download(tmp_dir, os.path.basename(_URL), _URL)
        extract_all(archive, tmp_dir)
        dirs = _TRAIN_DIRS if dataset_split == DatasetSplit.TRAIN else _EVAL_DIRS
        for d in dirs:
            for path in sorted(fileio.glob(os.path.join(tmp_dir, d, "*.txt"))):
                yield from question_answer_pairs(path)


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (AlgorithmicMathDeepmindAll,)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.algorithmic_math_deepmind")
