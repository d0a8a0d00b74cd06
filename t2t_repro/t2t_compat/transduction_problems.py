"""``tensor2tensor.data_generators.transduction_problems``: T2T 1.15.7's synthetic sequence
transduction problems (Grefenstette et al. 2015) under T2T's names: ``copy_sequence``,
``copy_sequence_small``, ``reverse_sequence``, ``reverse_sequence_small`` and
``flip_bi_gram_sequence``.

Each sample is drawn from Python's global ``random`` with T2T's calls in T2T's order (a length
by ``randint``, then each token by ``choice`` over ``sym_1``..``sym_N``), and ``t2t-datagen``
seeds it as T2T's does (``--random_seed``), so the shards hold T2T's records: one TRAIN stream
dealt over T2T's default 100 train and 1 dev shards (``is_generate_per_split`` is false), then
shuffled. The vocabulary is T2T's word list sorted as strings (``vocab.<name>.tokens``).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.builtin.problems.base import DEFAULT_SEED
from t2t_repro.data import t2t_shards
from t2t_repro.t2t_compat import refusals, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType

# T2T's constant (transduction_problems.py), unused there too.
MAX_GENERATOR_ATTEMPTS = 100


def _by_split(train: int, other: int, dataset_split: str) -> int:
    """T2T's per-split table: one value for TRAIN, another for EVAL and TEST."""
    sizes = {DatasetSplit.TRAIN: train, DatasetSplit.EVAL: other, DatasetSplit.TEST: other}
    return sizes[dataset_split]


class TransductionProblem(Text2TextProblem):
    """T2T's abstract base (``transduction_problems.py``, ``TransductionProblem``): random
    sequences of ``num_symbols`` tokens, each mapped by ``transpose_sequence``."""

    def __init__(self, was_reversed: bool = False, was_copy: bool = False) -> None:
        # T2T passes False for both whatever it is given: a _rev or _copy name of a
        # transduction problem is the problem itself (TransductionProblem.__init__).
        del was_reversed, was_copy
        super().__init__(was_reversed=False, was_copy=False)
        self.vocab = self.build_vocab()

    @property
    def num_symbols(self) -> int:
        return 128

    def min_sequence_length(self, dataset_split: str) -> int:
        return _by_split(8, 65, dataset_split)

    def max_sequence_length(self, dataset_split: str) -> int:
        return _by_split(64, 128, dataset_split)

    def num_samples(self, dataset_split: str) -> int:
        return _by_split(1000000, 10000, dataset_split)

    @property
    def num_shards(self) -> int:
        # T2T's property, which its datagen never reads (dataset_splits: 100 train, 1 dev).
        return 10

    @property
    def is_generate_per_split(self) -> bool:
        return False

    @property
    def vocab_type(self) -> str:
        return VocabType.TOKEN

    def sequence_length(self, dataset_split: str) -> int:
        return random.randint(
            self.min_sequence_length(dataset_split), self.max_sequence_length(dataset_split)
        )

    def build_vocab(self) -> list[str]:
        return [f"sym_{i}" for i in range(1, self.num_symbols + 1)]

    def get_or_create_vocab(self, data_dir: str, tmp_dir: str | None, force_get: bool = False):
        """T2T's: the sorted word list stored when the file is missing, else the file read."""
        path = os.path.join(data_dir, self.vocab_filename)
        if not fileio.exists(path):
            encoder = text_encoder.TokenTextEncoder(None, vocab_list=sorted(self.vocab))
            encoder.store_to_file(path)
            return encoder
        return text_encoder.TokenTextEncoder(path, replace_oov=self.oov_token)

    def generate_random_sequence(self, dataset_split: str) -> list[str]:
        length = self.sequence_length(dataset_split)
        return [random.choice(self.vocab) for _ in range(length)]

    def transpose_sequence(self, input_sequence: list[str]) -> list[str]:
        raise NotImplementedError()

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        for _ in range(self.num_samples(dataset_split)):
            source = self.generate_random_sequence(dataset_split)
            target = self.transpose_sequence(source)
            yield {"inputs": " ".join(source), "targets": " ".join(target)}

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        """A split's texts are drawn again from the global ``random``: from a fresh copy of it
        seeded as ``t2t-datagen`` seeds, so decoding a split leaves the caller's draws alone."""
        state = random.getstate()
        try:
            random.seed(t2t_shards.tool_seed() or DEFAULT_SEED)
            return super().source_lines(tmp_dir, split)
        finally:
            random.setstate(state)


class _Small:
    """The ``..._small`` variants' sizes (T2T's ``CopySequenceSmall``, ``ReverseSequenceSmall``):
    64 symbols, train lengths 4..16, dev 17..32, 100,000 train samples."""

    @property
    def num_symbols(self) -> int:
        return 64

    def min_sequence_length(self, dataset_split: str) -> int:
        return _by_split(4, 17, dataset_split)

    def max_sequence_length(self, dataset_split: str) -> int:
        return _by_split(16, 32, dataset_split)

    def num_samples(self, dataset_split: str) -> int:
        return _by_split(100000, 10000, dataset_split)


@t2t_registry.register_problem
class CopySequence(TransductionProblem):
    """The input sequence as it is."""

    def transpose_sequence(self, input_sequence: list[str]) -> list[str]:
        return input_sequence


@t2t_registry.register_problem
class CopySequenceSmall(_Small, CopySequence):
    """``CopySequence`` with shorter sequences of 64 symbols."""


@t2t_registry.register_problem
class ReverseSequence(TransductionProblem):
    """The input sequence reversed."""

    def transpose_sequence(self, input_sequence: list[str]) -> list[str]:
        return input_sequence[::-1]


@t2t_registry.register_problem
class ReverseSequenceSmall(_Small, ReverseSequence):
    """``ReverseSequence`` with shorter sequences of 64 symbols."""


@t2t_registry.register_problem
class FlipBiGramSequence(TransductionProblem):
    """Each pair of tokens swapped: ``1 2 3 4`` -> ``2 1 4 3``."""

    def sequence_length(self, dataset_split: str) -> int:
        """An even length: T2T's bounds rounded inward to even, one ``randint`` draw."""
        low = self.min_sequence_length(dataset_split)
        low += low % 2
        high = self.max_sequence_length(dataset_split)
        high -= high % 2
        length = random.randint(low, high)
        return length - length % 2

    def transpose_sequence(self, input_sequence: list[str]) -> list[str]:
        return [
            input_sequence[i + 1] if i % 2 == 0 else input_sequence[i - 1]
            for i in range(len(input_sequence))
        ]


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (
    CopySequence,
    CopySequenceSmall,
    ReverseSequence,
    ReverseSequenceSmall,
    FlipBiGramSequence,
)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.transduction_problems")
