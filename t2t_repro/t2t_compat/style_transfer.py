"""``tensor2tensor.data_generators.style_transfer``: T2T 1.15.7's Shakespeare <-> modern English
style transfer problems under T2T's names: ``style_transfer_shakespeare_to_modern``,
``style_transfer_modern_to_shakespeare`` and their ``_characters`` variants.

Each split's archive (``shakespeare.train.tgz``, ``shakespeare.dev.tgz``: in --tmp_dir or
downloaded there from T2T's address) is extracted into --tmp_dir on every read, as T2T does, and
its ``<split>.original`` / ``<split>.modern`` files are read line by line as a pair. The subword
vocabulary (``vocab.<name>.8000.subwords``) is built when the first split is read, from up to
1e6 bytes of each training file (T2T's ``get_or_generate_vocab``); one shard per split.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from t2t_repro.data.text_files import extract_all
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator

_SHAKESPEARE_MODERN_TRAIN_DATASET = [
    [
        "https://github.com/tlatkowski/st/raw/master/shakespeare.train.tgz",
        ("train.original", "train.modern"),
    ]
]
_SHAKESPEARE_MODERN_DEV_DATASET = [
    [
        "https://github.com/tlatkowski/st/raw/master/shakespeare.dev.tgz",
        ("dev.original", "dev.modern"),
    ]
]
_TRAIN_SHARDS = 1
_DEV_SHARDS = 1
_SUBWORD_VOCAB_SIZE = 8000


class StyleTransferProblemShakespeare(Text2TextProblem):
    """T2T's base class: ``source`` and ``target`` are the files' suffixes."""

    @property
    def target(self) -> str:
        raise NotImplementedError()

    @property
    def source(self) -> str:
        raise NotImplementedError()

    def dataset_url(self, dataset_split: str) -> list:
        if dataset_split == DatasetSplit.TRAIN:
            return _SHAKESPEARE_MODERN_TRAIN_DATASET
        return _SHAKESPEARE_MODERN_DEV_DATASET

    def vocab_data_files(self) -> list:
        """The vocabulary's sources: the training archive's two files."""
        return self.dataset_url(DatasetSplit.TRAIN)

    @property
    def approx_vocab_size(self) -> int:
        return _SUBWORD_VOCAB_SIZE

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": _TRAIN_SHARDS},
            {"split": DatasetSplit.EVAL, "shards": _DEV_SHARDS},
        ]

    @property
    def is_generate_per_split(self) -> bool:
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        # Not a generator: as T2T's, the archive is extracted (and the vocabulary stored)
        # when called.
        url = self.dataset_url(dataset_split)[0][0]
        name = os.path.basename(url)
        archive = generator_utils.maybe_download(tmp_dir, name, url)
        extract_all(archive, tmp_dir)
        if data_dir and self.vocab_type == VocabType.SUBWORD:
            generator_utils.get_or_generate_vocab(
                data_dir,
                tmp_dir,
                self.vocab_filename,
                self.approx_vocab_size,
                self.vocab_data_files(),
            )
        source, target = self.source_target_paths(dataset_split, tmp_dir)
        return text2text_txt_iterator(source, target)

    def source_target_paths(self, dataset_split: str, tmp_dir: str) -> tuple[str, str]:
        tag = "train" if dataset_split == DatasetSplit.TRAIN else "dev"
        return os.path.join(tmp_dir, tag + self.source), os.path.join(tmp_dir, tag + self.target)


@t2t_registry.register_problem
class StyleTransferShakespeareToModern(StyleTransferProblemShakespeare):
    """Shakespeare's English (``.original``) to modern English (``.modern``)."""

    @property
    def target(self) -> str:
        return ".modern"

    @property
    def source(self) -> str:
        return ".original"


@t2t_registry.register_problem
class StyleTransferModernToShakespeare(StyleTransferProblemShakespeare):
    """Modern English (``.modern``) to Shakespeare's (``.original``)."""

    @property
    def target(self) -> str:
        return ".original"

    @property
    def source(self) -> str:
        return ".modern"


@t2t_registry.register_problem
class StyleTransferShakespeareToModernCharacters(StyleTransferShakespeareToModern):
    """With T2T's byte vocabulary."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER


@t2t_registry.register_problem
class StyleTransferModernToShakespeareCharacters(StyleTransferModernToShakespeare):
    """With T2T's byte vocabulary."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (
    StyleTransferShakespeareToModern,
    StyleTransferModernToShakespeare,
    StyleTransferShakespeareToModernCharacters,
    StyleTransferModernToShakespeareCharacters,
)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.style_transfer")
