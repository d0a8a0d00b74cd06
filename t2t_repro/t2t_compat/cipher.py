"""``tensor2tensor.data_generators.cipher``: T2T 1.15.7's cipher problems under T2T's names
(``algorithmic_cipher_shift5``, ``_shift200``, ``_vigenere5``, ``_vigenere200``).

Algorithmic problems (``algorithmic.py``'s ``AlgorithmicProblem``: its shards, hparams and
seeding): each plaintext is ``train_length`` symbols drawn at once by numpy from the problem's
``distribution`` (T2T's one ``np.random.choice`` call for all cases of a split), its target the
text enciphered by a shift of the alphabet, or a Vigenere key of shifts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

import numpy as np

from t2t_repro.t2t_compat import refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.algorithmic import AlgorithmicProblem


class ShiftEncryptionLayer:
    """The alphabet ``vocab`` rotated right by ``shift`` (left when negative)."""

    def __init__(self, vocab: Sequence, shift: int) -> None:
        self.shift = shift
        rotated = deque(vocab)
        rotated.rotate(shift)
        self.encrypt = dict(zip(vocab, rotated, strict=True))
        self.decrypt = dict(zip(rotated, vocab, strict=True))

    def encrypt_character(self, character):
        return self.encrypt[character]

    def decrypt_character(self, character):
        return self.decrypt[character]


def generate_plaintext_random(plain_vocab, distribution, train_samples, length) -> np.ndarray:
    """``train_samples`` rows of ``length`` symbol indices, drawn from ``distribution``."""
    if distribution is not None:
        assert len(distribution) == len(plain_vocab)  # as T2T's
    return np.random.choice(range(len(plain_vocab)), (train_samples, length), p=distribution)


def encipher_shift(plaintext, plain_vocab, shift: int) -> list[list]:
    cipher = ShiftEncryptionLayer(plain_vocab, shift)
    return [[cipher.encrypt_character(c) for c in sentence] for sentence in plaintext]


def encipher_vigenere(plaintext, plain_vocab, key: Sequence[int]) -> list[list]:
    """Symbol ``j`` of each sentence shifted by ``key[j % len(key)]``."""
    layers = [ShiftEncryptionLayer(plain_vocab, i) for i in range(len(plain_vocab))]
    return [
        [layers[key[j % len(key)]].encrypt_character(c) for j, c in enumerate(sentence)]
        for sentence in plaintext
    ]


class _Cipher(AlgorithmicProblem):
    num_symbols = property(lambda self: 5)
    distribution = property(lambda self: [0.4, 0.3, 0.2, 0.08, 0.02])
    dev_length = property(lambda self: self.train_length)

    def encipher(self, indices, plain_vocab) -> list[list]:
        raise NotImplementedError()

    def generator(self, nbr_symbols, max_length, nbr_cases) -> Iterator[dict]:
        plain_vocab = range(nbr_symbols)
        indices = generate_plaintext_random(plain_vocab, self.distribution, nbr_cases, max_length)
        codes = self.encipher(indices, plain_vocab)
        for plain, code in zip(indices, codes, strict=True):
            yield {"inputs": plain, "targets": code}


def _linear_distribution(self) -> list[float]:
    """T2T's ``_200`` variants: symbol ``v`` drawn with weight ``v`` (symbol 0 never)."""
    values = range(self.num_symbols)
    total = sum(values)
    return [v / total for v in values]


@t2t_registry.register_problem
class AlgorithmicCipherShift5(_Cipher):
    shift = property(lambda self: 1)
    train_length = property(lambda self: 100)

    def encipher(self, indices, plain_vocab):
        return encipher_shift(indices, plain_vocab, self.shift)


@t2t_registry.register_problem
class AlgorithmicCipherVigenere5(_Cipher):
    key = property(lambda self: [1, 3])
    train_length = property(lambda self: 200)

    def encipher(self, indices, plain_vocab):
        return encipher_vigenere(indices, plain_vocab, self.key)


@t2t_registry.register_problem
class AlgorithmicCipherShift200(AlgorithmicCipherShift5):
    num_symbols = property(lambda self: 200)
    distribution = property(_linear_distribution)


@t2t_registry.register_problem
class AlgorithmicCipherVigenere200(AlgorithmicCipherVigenere5):
    num_symbols = property(lambda self: 200)
    distribution = property(_linear_distribution)


# Registered again after a registry reset (aliases.py).
T2T_REGISTERED_PROBLEMS = (
    AlgorithmicCipherShift5,
    AlgorithmicCipherVigenere5,
    AlgorithmicCipherShift200,
    AlgorithmicCipherVigenere200,
)

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.cipher")
