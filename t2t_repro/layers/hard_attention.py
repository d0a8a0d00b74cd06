"""T2T's hard attention: the softmax weights kept at their k largest per query, renormalised.

T2T (``layers/common_attention.py``, ``harden_attention_weights``, applied by
``dot_product_attention`` and ``dot_product_attention_relative`` after the softmax when the
hparam ``hard_attention_k`` > 0, in every attention of the transformer, in training, evaluation
and decoding alike): Gumbel noise ``-log(-log(u))`` times ``gumbel_noise_weight`` added first
(``u`` uniform in [1e-5, 1 - 1e-5); in every mode, when the weight is > 0), then the k-th
largest value of each row subtracted (``common_layers.top_kth_iterative``: k - 1 times the
row's maximum is set to 0, every element equal to it at once, then the maximum; no gradient),
negative results set to 0 and the row divided by its sum (at least 1e-6).
"""

from __future__ import annotations

import tensorflow as tf

MIN_UNIFORM, MAX_UNIFORM = 1e-5, 1 - 1e-5  # harden_attention_weights' tf.random_uniform bounds
LEFT_OUT = -1e9  # a cache slot not yet written: below every weight, as if absent (T2T's cache)


def top_kth_iterative(x: tf.Tensor, k: int) -> tf.Tensor:
    """The k-th largest of each row of ``x`` [..., n] as [..., 1], T2T's way (ties count once;
    fewer than k positive elements give 0). No gradient, as T2T's."""
    cur = tf.stop_gradient(x)
    for _ in range(k - 1):
        top = tf.reduce_max(cur, axis=-1, keepdims=True)
        cur = cur * tf.cast(cur < top, cur.dtype)
    return tf.stop_gradient(tf.reduce_max(cur, axis=-1, keepdims=True))


def gumbel_noise(uniform: tf.Tensor, weight: float) -> tf.Tensor:
    return -tf.math.log(-tf.math.log(uniform)) * weight


def harden(weights: tf.Tensor, k: int, noise: tf.Tensor | None = None, absent=None) -> tf.Tensor:
    """T2T's ``harden_attention_weights`` of softmax ``weights`` [..., Lq, Lk]. ``absent``: a
    bool mask of key slots that T2T's attention does not have (a cached decoding buffer's
    unwritten slots), left out of the top k and zero."""
    if noise is not None:
        weights = weights + noise
    if absent is not None:
        weights = tf.where(absent, tf.constant(LEFT_OUT, weights.dtype), weights)
    weights = tf.nn.relu(weights - top_kth_iterative(weights, k))
    return weights / tf.maximum(tf.reduce_sum(weights, axis=-1, keepdims=True), 1e-6)
