"""T2T's length-bucketing scheme, exactly (``tensor2tensor/utils/data_reader.py``,
``batching_scheme`` and ``_bucket_boundaries``).

Boundaries grow from 8 by x1.1 (at least +1); each bucket's batch size is the token budget
divided by its upper length, rounded down to a divisor of a "window" (the largest highly
composite number <= 3x the largest batch size), so buckets fill evenly; everything is then
multiplied by the number of shards (replicas).
"""

from __future__ import annotations

import functools
import math


def bucket_boundaries(max_length: int, min_length: int = 8, step: float = 1.1) -> list[int]:
    """8, 9, 10, ... up to (excluding) ``max_length``."""
    if step <= 1.0:
        raise ValueError(f"length_bucket_step must be > 1; got {step}.")
    x, boundaries = min_length, []
    while x < max_length:
        boundaries.append(x)
        x = max(x + 1, int(x * step))
    return boundaries


@functools.cache
def highly_composite_numbers(limit: int) -> tuple[int, ...]:
    """Every n <= limit with more divisors than any smaller positive integer."""
    counts = [0] * (limit + 1)
    for d in range(1, limit + 1):
        for multiple in range(d, limit + 1, d):
            counts[multiple] += 1
    result, best = [], 0
    for n in range(1, limit + 1):
        if counts[n] > best:
            best = counts[n]
            result.append(n)
    return tuple(result)


def batching_scheme(
    batch_size: int,
    max_length: int,
    min_length_bucket: int = 8,
    length_bucket_step: float = 1.1,
    shard_multiplier: int = 1,
    length_multiplier: int = 1,
    min_length: int = 0,
) -> dict:
    """{"boundaries", "batch_sizes", "min_length", "max_length", "window_size"} as T2T."""
    max_length = max_length or batch_size
    if max_length < min_length:
        raise ValueError(f"max_length ({max_length}) < min_length ({min_length}).")
    boundaries = bucket_boundaries(max_length, min_length_bucket, length_bucket_step)
    boundaries = [b * length_multiplier for b in boundaries]
    max_length *= length_multiplier
    batch_sizes = [max(1, batch_size // length) for length in boundaries + [max_length]]
    window = max(n for n in highly_composite_numbers(3 * max(batch_sizes)))
    divisors = [d for d in range(1, window + 1) if window % d == 0]
    batch_sizes = [max(d for d in divisors if d <= size) for size in batch_sizes]
    return {
        "boundaries": boundaries,
        "batch_sizes": [size * shard_multiplier for size in batch_sizes],
        "min_length": min_length,
        "max_length": max_length,
        "window_size": window * shard_multiplier,
    }


def padded_bucket_lengths(
    max_length: int, step: float, min_length_bucket: int = 8, length_multiplier: int = 1
) -> list[int]:
    """A few padded lengths for XLA: ``min_length_bucket`` grown by ``step``, each rounded up to
    a multiple of 4, ending at ``max_length`` (all times ``length_multiplier``).

    Not T2T: an opt-in (``hparams.padded_bucket_step``) so that a jit-compiled step sees a
    bounded set of batch shapes, since XLA compiles once per shape.
    """
    if step <= 1.0:
        raise ValueError(f"padded_bucket_step must be > 1 (or 0: T2T's buckets); got {step}.")
    lengths, x = [], max(1, min_length_bucket)
    while x < max_length:
        lengths.append(x)
        x = max(x + 1, math.ceil(x * step / 4) * 4)
    lengths.append(max_length)
    return [length * length_multiplier for length in lengths]


def padded_batching_scheme(
    batch_size: int,
    max_length: int,
    step: float,
    min_length_bucket: int = 8,
    length_multiplier: int = 1,
) -> dict:
    """{"lengths", "batch_sizes"}: a batch of bucket k is ``batch_sizes[k] x lengths[k]``
    tokens, at most ``batch_size`` (T2T's per-batch token budget), padding included."""
    max_length = max_length or batch_size
    lengths = padded_bucket_lengths(max_length, step, min_length_bucket, length_multiplier)
    return {
        "lengths": lengths,
        "batch_sizes": [max(1, batch_size // length) for length in lengths],
    }
