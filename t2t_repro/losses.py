"""The training loss exactly as T2T computes it
(``tensor2tensor/layers/common_layers.py``, ``padded_cross_entropy`` and
``smoothing_cross_entropy``).

Label smoothing puts 1-eps on the true class and eps/(V-1) on each other class (not eps/V),
and subtracts the soft target's entropy so a perfect prediction scores 0 (a KL divergence).
PAD (id 0) is not counted, EOS is. Each replica returns (sum of token losses, token count)
and the trainer divides the all-reduced sums, giving a per-token mean over the global batch.

The forward pass evaluates the soft-target cross entropy without materialising one-hot
targets: sum_j soft_j * log p_j = low * sum_j log p_j + (conf - low) * log p_y. The backward
pass is written out as softmax - soft (see ``_soft_target_cross_entropy``), also without a
one-hot tensor.

bfloat16 logits (mixed precision) take a fused path: the same formulas, computed in float32
inside two XLA kernels that read the bf16 logits once each (see ``_fused_bf16_cross_entropy``).
float32 logits never take it, so fp32 results stay bit for bit what they were.
"""

from __future__ import annotations

import math
from collections.abc import Callable

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
    """Per-position smoothed cross entropy minus the target entropy: [B, L] (float32)."""
    labels = tf.convert_to_tensor(labels)
    vocab_size = logits.shape[-1]
    confidence = 1.0 - label_smoothing
    low = label_smoothing / (vocab_size - 1) if label_smoothing else 0.0
    with tf.name_scope("token_losses"):  # Names the kernels in a profile.
        if logits.dtype == tf.bfloat16:
            xent = _fused_bf16_cross_entropy(logits, labels, confidence, low)
        else:
            logits = tf.cast(logits, tf.float32)
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

    @tf.custom_gradient
    def xent(logits):
        log_z = tf.reduce_logsumexp(logits, axis=-1)
        label_logit = tf.gather(logits, labels, axis=-1, batch_dims=labels.shape.rank)
        loss = log_z - (confidence - low) * label_logit
        if low:
            loss -= low * tf.reduce_sum(logits, axis=-1)

        def grad(upstream):
            with tf.name_scope("xent_grad"):  # Names the kernels in a profile.
                probs = tf.exp(logits - log_z[..., None])
                if _in_xla():  # XLA builds the one-hot inside its fused kernel: no memory pass.
                    soft = tf.one_hot(
                        labels,
                        logits.shape[-1],
                        on_value=confidence,
                        off_value=low,
                        dtype=probs.dtype,
                    )
                    return upstream[..., None] * (probs - soft)
                return upstream[..., None] * _minus_soft_target(probs, labels, confidence, low)

        return loss, grad

    return xent(logits)


def _in_xla() -> bool:
    """Whether the graph being built is compiled by XLA (``jit_compile``): there the one-hot
    costs nothing, and keeping XLA's graph as it was keeps its fusion, and so its bits."""
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import control_flow_util

    return control_flow_util.GraphOrParentsInXlaContext(ops.get_default_graph())


def _minus_soft_target(probs: tf.Tensor, labels: tf.Tensor, confidence: float, low: float):
    """``probs - one_hot(labels, on=confidence, off=low)``, without the one-hot: ``low`` is
    subtracted everywhere and the label entries are rewritten as ``p_y - confidence``. The
    same subtractions give the same bits, and the [.., V] one-hot tensor is neither written
    nor read (two passes over the logits' size fewer)."""
    diff = probs - low if low else probs
    flat = tf.reshape(diff, [-1, probs.shape[-1]])
    label_probs = tf.gather(probs, labels, axis=-1, batch_dims=labels.shape.rank)
    at = tf.stack([tf.range(tf.shape(flat)[0]), tf.reshape(labels, [-1])], axis=1)
    updates = tf.reshape(label_probs, [-1]) - confidence
    return tf.reshape(tf.tensor_scatter_nd_update(flat, at, updates), tf.shape(probs))


@tf.function(jit_compile=True)
def _bf16_xent_forward(logits, labels, confidence, low):
    """(loss, log Z) from bf16 logits, in float32: one pass over [B, L, V] in XLA."""
    logits = tf.cast(logits, tf.float32)
    log_z = tf.reduce_logsumexp(logits, axis=-1)
    label_logit = tf.gather(logits, labels, axis=-1, batch_dims=labels.shape.rank)
    loss = log_z - (confidence - low) * label_logit - low * tf.reduce_sum(logits, axis=-1)
    return loss, log_z


@tf.function(jit_compile=True)
def _bf16_xent_backward(logits, labels, log_z, upstream, confidence, low):
    """upstream * (softmax - soft) in float32, returned in bf16 (the logits' gradient)."""
    soft = tf.one_hot(labels, logits.shape[-1], on_value=confidence, off_value=low)
    probs = tf.exp(tf.cast(logits, tf.float32) - log_z[..., None])
    return tf.cast(upstream[..., None] * (probs - soft), tf.bfloat16)


def _fused_bf16_cross_entropy(
    logits: tf.Tensor, labels: tf.Tensor, confidence: float, low: float
) -> tf.Tensor:
    """``_soft_target_cross_entropy`` of bf16 logits, as two XLA kernels (forward, backward).

    Why: with bf16 matmuls the loss over the vocabulary is a larger share of the step.
    Unfused, TensorFlow writes a float32 copy of the [B, L, V] logits and makes about ten
    passes over it (max, exp, sums, the gather, the one-hot and softmax of the gradient);
    fused, the forward reads the bf16 logits once and the backward reads them once more and
    writes the bf16 gradient. The matmuls around it stay on oneDNN.
    """
    confidence = tf.constant(confidence, tf.float32)
    low = tf.constant(low, tf.float32)

    @tf.custom_gradient
    def xent(logits):
        loss, log_z = _bf16_xent_forward(logits, labels, confidence, low)

        def grad(upstream):
            with tf.name_scope("xent_grad"):  # Names the kernel in a profile.
                return _bf16_xent_backward(logits, labels, log_z, upstream, confidence, low)

        return loss, grad

    return xent(logits)


def padded_cross_entropy(
    logits: tf.Tensor,
    labels: tf.Tensor,
    label_smoothing: float = 0.0,
    weights: tf.Tensor | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """(sum of losses over non-PAD targets, number of non-PAD targets) for one replica;
    ``weights`` given: the sum of the losses times them, and their sum (T2T's ``weights_fn``)."""
    if weights is None:
        weights = tf.cast(tf.not_equal(labels, 0), tf.float32)
    losses = token_losses(logits, labels, label_smoothing)
    return tf.reduce_sum(losses * weights), tf.reduce_sum(weights)


def padded_cross_entropy_of_hidden(
    hidden: tf.Tensor,
    logits_fn: Callable[[tf.Tensor], tf.Tensor],
    labels: tf.Tensor,
    label_smoothing: float = 0.0,
) -> tuple[tf.Tensor, tf.Tensor]:
    """``padded_cross_entropy(logits_fn(hidden), labels, label_smoothing)``, with the
    vocabulary projection and the loss computed at the non-PAD targets only.

    Why: a PAD target's loss is multiplied by 0, yet the projection to the vocabulary and the
    loss over it are the largest non-layer work of a step (about a third of a small model's);
    skipping the padded positions saves their share (13% in the peers' benchmark batch).
    ``hidden`` is [B, L, d], ``logits_fn`` maps [N, d] rows to [N, V] logits row by row.

    The result is the same function's: each kept row's logits and loss do not depend on the
    other rows, and the per-token losses are put back on the [B, L] grid (0 at PAD) and summed
    there as ``padded_cross_entropy`` sums them. It is equal to float32 rounding, not always to
    the bit: the projection is a matmul with fewer rows, for which oneDNN or Eigen may choose
    another kernel (and summation order) on some CPUs; the embedding gradient also sums over
    fewer rows.
    bfloat16 hidden states and XLA take the full path: their fused loss is compiled per shape,
    and the number of real tokens changes with every batch.
    """
    if hidden.dtype == tf.bfloat16 or _in_xla():
        return padded_cross_entropy(logits_fn(hidden), labels, label_smoothing)
    flat_labels = tf.reshape(labels, [-1])
    rows = tf.where(tf.not_equal(flat_labels, 0))
    hidden_rows = tf.gather_nd(tf.reshape(hidden, [-1, hidden.shape[-1]]), rows)
    losses = token_losses(logits_fn(hidden_rows), tf.gather_nd(flat_labels, rows), label_smoothing)
    grid = tf.scatter_nd(rows, losses, tf.shape(flat_labels, out_type=tf.int64))
    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)
    return tf.reduce_sum(tf.reshape(grid, tf.shape(labels)) * weights), tf.reduce_sum(weights)


def multi_label_loss(
    logits: tf.Tensor, labels: tf.Tensor, label_smoothing: float = 0.0
) -> tuple[tf.Tensor, tf.Tensor]:
    """T2T's ``multi_label_loss`` (``tensor2tensor/layers/modalities.py``): logits [B, 1, C]
    (one row an example) against label lists [B, L] padded with 0. Each example's loss is the
    mean of its (smoothed) cross entropies over its non-zero labels (``weights_nonzero``: a
    label 0 counts as padding, as in T2T); returns (sum of those means over the examples with a
    label, their number), the numerator and denominator T2T's ``_loss_single`` divides."""
    labels = tf.convert_to_tensor(labels)
    tiled = tf.tile(logits, [1, tf.shape(labels)[1], 1])  # T2T tiles the one row per label
    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)
    xent = token_losses(tiled, labels, label_smoothing) * weights
    counts = tf.reduce_sum(weights, axis=1)
    per_example = tf.reduce_sum(xent, axis=1) / (counts + 1e-8)
    has_label = tf.cast(counts > 0.0, tf.float32)
    return tf.reduce_sum(per_example * has_label), tf.reduce_sum(has_label)
