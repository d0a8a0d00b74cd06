"""``tensor2tensor.data_generators.algorithmic``: T2T 1.15.7's algorithmic problems under T2T's
names (``algorithmic_identity_binary40``, ``algorithmic_reverse_decimal40``,
``algorithmic_addition_binary40``, ``algorithmic_sort_problem``, ``tiny_algo``...).

Each case is drawn from numpy's global generator with T2T's calls in T2T's order, and
``t2t-datagen`` seeds it as T2T's does (``--random_seed``), so the shards hold T2T's cases: the
symbols shifted past the two reserved ids, then EOS, written round-robin into the shards with no
shuffle (``AlgorithmicProblem.generate_data``). Inputs and targets are symbol ids (T2T's plain
``TextEncoder``: ``"1 0 1"`` in, ids out), spaces ``DIGIT_0`` and ``DIGIT_1``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from t2t_repro.t2t_compat import generator_utils, refusals, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.metrics import Metrics
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import Problem, SpaceID

Case = dict[str, list[int]]


class AlgorithmicProblem(Problem):
    """T2T's base class: ``train_size`` cases of length up to ``train_length`` in
    ``num_shards`` train shards, ``dev_size`` up to ``dev_length`` in one dev shard."""

    @property
    def num_symbols(self) -> int:
        raise NotImplementedError()

    def generator(self, nbr_symbols: int, max_length: int, nbr_cases: int) -> Iterator[Case]:
        raise NotImplementedError()

    train_length = property(lambda self: 40)
    dev_length = property(lambda self: 400)
    train_size = property(lambda self: 100000)
    dev_size = property(lambda self: 10000)
    num_shards = property(lambda self: 10)

    def generate_data(self, data_dir, _, task_id=-1):
        def with_eos(max_length: int, cases: int) -> Iterator[Case]:
            for case in self.generator(self.num_symbols, max_length, cases):
                yield {
                    k: [i + text_encoder.NUM_RESERVED_TOKENS for i in v] + [text_encoder.EOS_ID]
                    for k, v in case.items()
                }

        generator_utils.generate_dataset_and_shuffle(
            with_eos(self.train_length, self.train_size),
            self.training_filepaths(data_dir, self.num_shards, shuffled=True),
            with_eos(self.dev_length, self.dev_size),
            self.dev_filepaths(data_dir, 1, shuffled=True),
            shuffle=False,
        )

    def hparams(self, defaults, unused_model_hparams):
        vocab_size = self.num_symbols + text_encoder.NUM_RESERVED_TOKENS
        defaults.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        defaults.vocab_size = {"inputs": vocab_size, "targets": vocab_size}
        defaults.input_space_id = SpaceID.DIGIT_0
        defaults.target_space_id = SpaceID.DIGIT_1


def _uniform(nbr_symbols: int, max_length: int) -> list[int]:
    """A length drawn from [1, max_length], then each symbol from [0, nbr_symbols)."""
    length = np.random.randint(max_length) + 1
    return [np.random.randint(nbr_symbols) for _ in range(length)]


@t2t_registry.register_problem
class AlgorithmicIdentityBinary40(AlgorithmicProblem):
    num_symbols = property(lambda self: 2)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        for _ in range(nbr_cases):
            inputs = _uniform(nbr_symbols, max_length)
            yield {"inputs": inputs, "targets": inputs}


@t2t_registry.register_problem
class AlgorithmicIdentityDecimal40(AlgorithmicIdentityBinary40):
    num_symbols = property(lambda self: 10)


@t2t_registry.register_problem
class AlgorithmicIdentityVocab95Train20Eval30(AlgorithmicIdentityBinary40):
    num_symbols = property(lambda self: 95)
    train_length = property(lambda self: 20)
    dev_length = property(lambda self: 30)
    train_size = property(lambda self: 1000000)


@t2t_registry.register_problem
class AlgorithmicShiftDecimal40(AlgorithmicProblem):
    """Each target symbol is its input symbol plus 10 (inputs from the first 10 symbols)."""

    num_symbols = property(lambda self: 20)
    dev_length = property(lambda self: 80)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        shift = 10
        for _ in range(nbr_cases):
            inputs = _uniform(nbr_symbols - shift, max_length)
            yield {"inputs": inputs, "targets": [i + shift for i in inputs]}


@t2t_registry.register_problem
class AlgorithmicReverseBinary40(AlgorithmicProblem):
    num_symbols = property(lambda self: 2)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        for _ in range(nbr_cases):
            inputs = _uniform(nbr_symbols, max_length)
            yield {"inputs": inputs, "targets": list(reversed(inputs))}


@t2t_registry.register_problem
class AlgorithmicReverseDecimal40(AlgorithmicReverseBinary40):
    num_symbols = property(lambda self: 10)


@t2t_registry.register_problem
class AlgorithmicReverseBinary40Test(AlgorithmicReverseBinary40):
    train_length = property(lambda self: 10)
    dev_length = property(lambda self: 10)
    train_size = property(lambda self: 1000)
    dev_size = property(lambda self: 100)
    num_shards = property(lambda self: 1)


def zipf_distribution(nbr_symbols: int, alpha: float) -> list[float]:
    """T2T's: the cumulative Zipf distribution over ``nbr_symbols`` (its first entry 0)."""
    weights = np.power(np.arange(1, nbr_symbols + 1), -alpha)
    cumulative = np.r_[0.0, np.cumsum(weights)]
    return [x / cumulative[-1] for x in cumulative]


def zipf_random_sample(distr_map: list[float], sample_len: int) -> list[int]:
    return list(np.searchsorted(distr_map, np.random.random(sample_len)))


def reverse_generator_nlplike(
    nbr_symbols, max_length, nbr_cases, scale_std_dev=100, alpha=1.5
) -> Iterator[Case]:
    """Lengths around ``max_length / 2`` (normal, std ``max_length / scale_std_dev``), Zipf
    symbols, the targets reversed."""
    std_dev = max_length / scale_std_dev
    distr_map = zipf_distribution(nbr_symbols, alpha)
    for _ in range(nbr_cases):
        length = int(abs(np.random.normal(loc=max_length / 2, scale=std_dev)) + 1)
        inputs = zipf_random_sample(distr_map, length)
        yield {"inputs": inputs, "targets": list(reversed(inputs))}


@t2t_registry.register_problem
class AlgorithmicReverseNlplike8k(AlgorithmicProblem):
    num_symbols = property(lambda self: 8000)
    train_length = property(lambda self: 70)
    dev_length = property(lambda self: 70)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        return reverse_generator_nlplike(nbr_symbols, max_length, nbr_cases, 10, 1.300)


@t2t_registry.register_problem
class AlgorithmicReverseNlplike32k(AlgorithmicReverseNlplike8k):
    num_symbols = property(lambda self: 32000)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        return reverse_generator_nlplike(nbr_symbols, max_length, nbr_cases, 10, 1.050)


def lower_endian_to_number(digits: list[int], base: int) -> int:
    return sum(d * base**i for i, d in enumerate(digits))


def number_to_lower_endian(n: int, base: int) -> list[int]:
    digits = [n % base]
    while n >= base:
        n //= base
        digits.append(n % base)
    return digits


def random_number_lower_endian(length: int, base: int) -> list[int]:
    """``length`` digits, lowest first; the last is not 0 unless it is the only one."""
    if length == 1:
        return [np.random.randint(base)]
    prefix = [np.random.randint(base) for _ in range(length - 1)]
    return [*prefix, np.random.randint(base - 1) + 1]


class _Arithmetic(AlgorithmicProblem):
    """Two numbers (base ``num_symbols``, lowest digit first) separated by the symbol
    ``base``; the target is ``combine`` of them."""

    @staticmethod
    def combine(a: int, b: int) -> int:
        raise NotImplementedError()

    def generator(self, base, max_length, nbr_cases):
        if max_length < 3:
            raise ValueError("Maximum length must be at least 3.")
        for _ in range(nbr_cases):
            l1 = np.random.randint(max_length // 2) + 1
            l2 = np.random.randint(max_length - l1 - 1) + 1
            n1 = random_number_lower_endian(l1, base)
            n2 = random_number_lower_endian(l2, base)
            result = self.combine(
                lower_endian_to_number(n1, base), lower_endian_to_number(n2, base)
            )
            yield {"inputs": [*n1, base, *n2], "targets": number_to_lower_endian(result, base)}


@t2t_registry.register_problem
class AlgorithmicAdditionBinary40(_Arithmetic):
    num_symbols = property(lambda self: 2)
    combine = staticmethod(lambda a, b: a + b)


@t2t_registry.register_problem
class AlgorithmicAdditionDecimal40(AlgorithmicAdditionBinary40):
    num_symbols = property(lambda self: 10)


@t2t_registry.register_problem
class AlgorithmicMultiplicationBinary40(_Arithmetic):
    num_symbols = property(lambda self: 2)
    combine = staticmethod(lambda a, b: a * b)


@t2t_registry.register_problem
class AlgorithmicMultiplicationDecimal40(AlgorithmicMultiplicationBinary40):
    num_symbols = property(lambda self: 10)


@t2t_registry.register_problem
class AlgorithmicSortProblem(AlgorithmicProblem):
    """Sort symbols drawn with replacement (``unique``: a prefix of a permutation)."""

    train_length = property(lambda self: 10)
    dev_length = property(lambda self: self.train_length * 2)
    num_symbols = property(lambda self: max(self.train_length, self.dev_length))
    unique = property(lambda self: False)

    def generator(self, nbr_symbols, max_length, nbr_cases):
        for _ in range(nbr_cases):
            length = np.random.randint(max_length) + 1
            if self.unique:
                inputs = np.arange(nbr_symbols)
                np.random.shuffle(inputs)
                inputs = list(inputs[:length])
            else:
                inputs = list(np.random.randint(nbr_symbols, size=length))
            yield {"inputs": inputs, "targets": sorted(inputs)}

    def eval_metrics(self):
        return [*super().eval_metrics(), Metrics.EDIT_DISTANCE]


@t2t_registry.register_problem
class TinyAlgo(AlgorithmicIdentityBinary40):
    """T2T's test problem: 100 identity cases a split, the symbols as drawn (no shift, no
    EOS), from ``AlgorithmicIdentityBinary40``'s generator."""

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        identity = AlgorithmicIdentityBinary40()
        generator_utils.generate_files(
            identity.generator(self.num_symbols, 40, 100000),
            self.training_filepaths(data_dir, 1, shuffled=True),
            100,
        )
        generator_utils.generate_files(
            identity.generator(self.num_symbols, 400, 10000),
            self.dev_filepaths(data_dir, 1, shuffled=True),
            100,
        )


# Registered again after a registry reset (aliases.py).
T2T_REGISTERED_PROBLEMS = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, AlgorithmicProblem) and "problem_name" in vars(cls)
)

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.algorithmic")
