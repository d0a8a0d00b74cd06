"""Random sampling in the greedy search, as T2T's ``sampling_method=random``
(``tensor2tensor/models/transformer.py``, ``fast_decode``'s greedy loop;
``tensor2tensor/layers/common_layers.py``, ``sample_with_temperature``).

T2T draws ``tf.multinomial(logits / sampling_temp)`` after keeping the ``sampling_keep_top_k``
largest logits, with a stateful generator: its samples differ from run to run. Here the
distribution is the same but the draw is reproducible. Each output row gets one uniform
number per step from a counter-based hash of (``--random_seed``, the row's input ids, how
many times the same ids came before it in the file or request, its sample index, the step),
and the token is the one whose interval of the cumulative distribution holds it (inverse-CDF
sampling: one number per row, not one per vocabulary entry). Every line is sampled on its
own, as T2T samples each: a repeated source line draws other samples than its first
occurrence. A row's samples depend on nothing else in its batch: the same seed gives the same
samples for the same input and occurrence whatever the batch size, the length bucket or where
the other lines are, and the exporter samples a request as ``t2t-decoder`` samples a file of
the same lines.

``sampling_temp=0`` is T2T's argmax and runs the plain greedy search (same ids).
"""

from __future__ import annotations

import tensorflow as tf

_M1 = 0x85EBCA6B  # MurmurHash3's 32-bit finaliser constants
_M2 = 0xC2B2AE35
_GOLDEN = 0x9E3779B9
BLOCK = 128  # vocabulary entries per block of the two-level inverse CDF


def _u32(value) -> tf.Tensor:
    return tf.constant(value & 0xFFFFFFFF, tf.uint32)


def fmix32(h: tf.Tensor) -> tf.Tensor:
    """MurmurHash3's finaliser: a bijection of uint32 whose output bits all depend on every
    input bit."""
    xor, shift = tf.bitwise.bitwise_xor, tf.bitwise.right_shift
    h = xor(h, shift(h, _u32(16))) * _u32(_M1)
    h = xor(h, shift(h, _u32(13))) * _u32(_M2)
    return xor(h, shift(h, _u32(16)))


def row_keys(inputs: tf.Tensor, occurrences: tf.Tensor | None = None) -> tf.Tensor:
    """inputs [B, L] int32 -> [B] uint32, a hash of each row's ids and their positions, and of
    its ``occurrences`` [B] (earlier rows of the same ids in the file or request; None: 0).

    PAD (0) entries are left out, so padding (batch or length bucket) does not change it. A
    first occurrence (0) keeps the key of its ids alone (``fmix32(0) == 0``), so a line that
    is not repeated draws what it drew before repeats were told apart."""
    ids = tf.cast(inputs, tf.uint32)
    positions = tf.cast(tf.range(tf.shape(inputs)[1]), tf.uint32)[None]
    terms = fmix32(tf.bitwise.bitwise_xor(fmix32(ids + _u32(_GOLDEN)), positions * _u32(_M2)))
    terms = tf.where(inputs != 0, terms, tf.zeros_like(terms))
    keys = fmix32(tf.reduce_sum(terms, axis=1))
    if occurrences is None:
        return keys
    repeat = fmix32(tf.cast(occurrences, tf.uint32) * _u32(_GOLDEN))
    return tf.bitwise.bitwise_xor(keys, repeat)


def batch_occurrences(inputs: tf.Tensor) -> tf.Tensor:
    """inputs [B, L] -> [B] int32: how many earlier rows of the batch have the same ids (the
    occurrence number of a repeated source in one request, e.g. the SavedModel's)."""
    same = tf.reduce_all(inputs[:, None, :] == inputs[None, :, :], axis=-1)  # [B, B]
    earlier = tf.range(tf.shape(inputs)[0])[:, None] > tf.range(tf.shape(inputs)[0])[None, :]
    return tf.reduce_sum(tf.cast(same & earlier, tf.int32), axis=1)


def row_streams(seed: int, keys: tf.Tensor, sample_index: tf.Tensor) -> tf.Tensor:
    """[B] uint32: the random stream of each output row, from the seed, its input's key and
    its sample index (0 .. num_samples - 1)."""
    high = fmix32(_u32((seed >> 32) + _GOLDEN))
    seeded = fmix32(tf.bitwise.bitwise_xor(_u32(seed), high))
    h = fmix32(tf.bitwise.bitwise_xor(keys, seeded))
    return fmix32(h + fmix32(tf.cast(sample_index, tf.uint32) + _u32(_M2)))


def uniforms(streams: tf.Tensor, step) -> tf.Tensor:
    """[B] float32 in (0, 1), one per row for decoding step ``step``: 24 hash bits."""
    step_hash = fmix32(tf.cast(step, tf.uint32) * _u32(_GOLDEN) + _u32(_M1))
    bits = tf.bitwise.right_shift(fmix32(tf.bitwise.bitwise_xor(streams, step_hash)), _u32(8))
    return (tf.cast(bits, tf.float32) + 0.5) * (1.0 / (1 << 24))


def sample_ids(
    log_probs: tf.Tensor, u: tf.Tensor, temperature: float, keep_top_k: int = -1
) -> tf.Tensor:
    """[B, V] log-probs (or logits) and [B] uniforms -> [B] int32 ids drawn from
    softmax(log_probs / temperature), restricted to the ``keep_top_k`` largest (-1: all).

    Top-k as T2T's: entries not above the (k+1)-th largest are dropped. Dropped (and masked,
    -inf) entries have probability exactly 0 and are never drawn."""
    x = log_probs / temperature if temperature != 1.0 else log_probs
    vocab = x.shape[-1]
    if keep_top_k > 0 and vocab is not None and keep_top_k < vocab:
        threshold = tf.math.top_k(x, k=keep_top_k + 1).values[:, -1:]
        x = tf.where(x > threshold, x, tf.constant(-float("inf"), x.dtype))
    weights = tf.exp(x - tf.reduce_max(x, axis=-1, keepdims=True))  # the maximum weighs 1
    return inverse_cdf(weights, u)


def inverse_cdf(weights: tf.Tensor, u: tf.Tensor, block: int = BLOCK) -> tf.Tensor:
    """[B, V] non-negative weights, [B] uniforms in (0, 1) -> [B] int32: the first index whose
    cumulative weight reaches ``u`` times the total, always an index of positive weight.

    In two levels, as a full-row cumulative sum is slow on a CPU (a 64 x 8192 ``tf.cumsum``
    took ~14 ms, four times the softmax): the block whose cumulative block sum reaches the
    target, then the index inside that block."""
    vocab = weights.shape[-1] if weights.shape[-1] is not None else tf.shape(weights)[-1]
    blocks = -(-vocab // block)
    weights = tf.pad(weights, [[0, 0], [0, blocks * block - vocab]])
    grouped = tf.reshape(weights, [-1, blocks, block])
    block_cdf = tf.cumsum(tf.reduce_sum(grouped, axis=-1), axis=-1)  # [B, blocks]
    target = u * block_cdf[:, -1]
    chosen = tf.minimum(
        tf.reduce_sum(tf.cast(block_cdf < target[:, None], tf.int32), axis=-1), blocks - 1
    )
    before = tf.where(
        chosen > 0, tf.gather(block_cdf, tf.maximum(chosen - 1, 0), batch_dims=1), 0.0
    )
    inner_cdf = tf.cumsum(tf.gather(grouped, chosen, batch_dims=1), axis=-1)  # [B, block]
    # Above 0 (before < target), and at most the block's own total: rounding in the two sums
    # can then only move the draw between entries of positive weight.
    inner_target = tf.minimum(target - before, inner_cdf[:, -1])
    inner = tf.reduce_sum(tf.cast(inner_cdf < inner_target[:, None], tf.int32), axis=-1)
    return chosen * block + tf.minimum(inner, block - 1)


def make_sampler(seed: int, keys: tf.Tensor, sample_index: tf.Tensor, temperature, top_k):
    """``choose(log_probs [B, V], step) -> ids [B]`` for the greedy search's loop."""
    streams = row_streams(seed, keys, sample_index)

    def choose(log_probs, step):
        return sample_ids(log_probs, uniforms(streams, step), temperature, top_k)

    return choose
