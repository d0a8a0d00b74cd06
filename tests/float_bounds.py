"""Tolerances for two float32 evaluations of one function by different paths.

oneDNN and Eigen choose their kernels, and so the order of every sum, by CPU (AVX2, AVX-512,
AMX) and by shape: a matmul over the kept rows of a batch and one over the whole grid may sum
each dot product in another order, on one CPU kind and not on another. Only the same
computation (same ops, same shapes) is reproducible to the bit; two paths are equal to float32
rounding, and the tests bound that rounding from the computation itself with the standard
first-order bounds (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 3): a sum of
K terms, in any order, is within ``gamma(K) * sum(|terms|)`` of the exact sum, so two
evaluations differ by at most twice that.
"""

from __future__ import annotations

import numpy as np

UNIT_ROUNDOFF = 2.0**-24  # float32: half the distance from 1 to the next float


def gamma(k: int) -> float:
    """Higham's gamma_k = k*u / (1 - k*u): the relative error bound of a k-term sum."""
    return k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def matmul_difference_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise bound on |a@b - a@b'| for two float32 evaluations of ``a @ b`` in any
    summation order: 2 * gamma(K) * (|a| @ |b|), K the contracted length."""
    a, b = np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64))
    return 2 * gamma(a.shape[-1]) * (a @ b)


def sum_difference_bound(terms: np.ndarray) -> float:
    """Bound on the difference of two float32 evaluations of ``sum(terms)``."""
    terms = np.abs(np.asarray(terms, np.float64))
    return 2 * gamma(terms.size) * float(terms.sum())


def chain_relative_bound(contraction_lengths: list[int]) -> float:
    """Relative bound on two float32 evaluations of a value computed through a chain of
    contractions (each a dot product of the given length, the next one's input): the first-order
    sum of their relative errors, twice (one per evaluation). A bound for well-conditioned
    layers; it is what a forward pass of a network rounds in the worst case."""
    return 2 * sum(gamma(k) for k in contraction_lengths)


def assert_same_bits(got, want) -> None:
    """Each pair of float tensors (float32, bfloat16) equal to the bit: one computation."""
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        bits = {2: np.uint16, 4: np.uint32}[a.dtype.size]
        np.testing.assert_array_equal(
            np.asarray(a.numpy()).view(bits), np.asarray(b.numpy()).view(bits)
        )
