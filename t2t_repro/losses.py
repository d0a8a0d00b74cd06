"""The training loss exactly as T2T computes it
(``tensor2tensor/layers/common_layers.py``, ``padded_cross_entropy`` and
``smoothing_cross_entropy``).

Label smoothing puts 1-eps on the true class and eps/(V-1) on each other class (not eps/V),
and subtracts the soft target's entropy so a perfect prediction scores 0 (a KL divergence).
PAD (id 0) is not counted, EOS is. Each replica returns (sum of token losses, token count)
and the trainer divides the all-reduced sums, giving a per-token mean over the global batch.

The forward pass evaluates the soft-target cross entropy without materialising one-hot
targets: sum_j soft_j * log p_j = low * sum_j log p_j + (conf - low) * log p_y. The backward
pass is written out as softmax - soft (see ``_soft_target_cross_entropy``).
"""

from __future__ import annotations

import math

import tensorflow as tf


def smoothing_entropy(vocab_size: int, label_smoothing: float) -> float:
    """Entropy Z of the smoothed target distribution (subtracted so the minimum is 0)."""
    confidence = 1.0 - label_smoothing
    low = label_smoothing / (vocab_size - 1)
    return (
        -(confidence * math.log(confidence) + (vocab_size - 1) * low * math.log(low + 1e-20))
        if label_smoothing
        else 0.0
    )


def token_losses(logits: tf.Tensor, labels: tf.Tensor, label_smoothing: float = 0.0) -> tf.Tensor:
    """Per-position smoothed cross entropy minus the target entropy: [B, L]."""
    logits = tf.cast(logits, tf.float32)
    labels = tf.convert_to_tensor(labels)
    vocab_size = logits.shape[-1]
    confidence = 1.0 - label_smoothing
    low = label_smoothing / (vocab_size - 1) if label_smoothing else 0.0
    xent = _soft_target_cross_entropy(logits, labels, confidence, low)
    return xent - smoothing_entropy(vocab_size, label_smoothing)


def _soft_target_cross_entropy(
    logits: tf.Tensor, labels: tf.Tensor, confidence: float, low: float
) -> tf.Tensor:
    """-sum_j soft_j log softmax(logits)_j, soft = ``confidence`` on the label, ``low`` elsewhere.

    With (confidence - low) + V * low = 1 this is log Z - (confidence - low) * logit_y -
    low * sum_j logit_j. The gradient is written out (softmax - soft): automatic
    differentiation of the gather and the log-sum-exp would scatter into a zero [B, L, V]
    tensor and keep exp(logits) alive from the forward pass, which cost about 6% of a
    transformer_base step on CPU (bench/bench_train_step.py).
    """
    vocab_size = logits.shape[-1]

    @tf.custom_gradient
    def xent(logits):
        log_z = tf.reduce_logsumexp(logits, axis=-1)
        label_logit = tf.gather(logits, labels, axis=-1, batch_dims=labels.shape.rank)
        loss = log_z - (confidence - low) * label_logit
        if low:
            loss -= low * tf.reduce_sum(logits, axis=-1)

        def grad(upstream):
            soft = tf.one_hot(
                labels, vocab_size, on_value=confidence, off_value=low, dtype=logits.dtype
            )
            return upstream[..., None] * (tf.exp(logits - log_z[..., None]) - soft)

        return loss, grad

    return xent(logits)


def padded_cross_entropy(
    logits: tf.Tensor, labels: tf.Tensor, label_smoothing: float = 0.0
) -> tuple[tf.Tensor, tf.Tensor]:
    """(sum of losses over non-PAD targets, number of non-PAD targets) for one replica."""
    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)
    losses = token_losses(logits, labels, label_smoothing)
    return tf.reduce_sum(losses * weights), tf.reduce_sum(weights)
