"""T2T's teacher-forced metrics of a multi-label target (``tensor2tensor/utils/metrics.py``)
on this project's logits [B, 1, C] (one row an example) and label lists [B, L] padded with 0.

T2T hands a MULTI_LABEL model's logits [B, 1, 1, 1, C] to every metric the problem lists,
with ``weights_nonzero``: ``padded_accuracy``, ``padded_accuracy_topk``,
``padded_sequence_accuracy`` and ``padded_neg_log_perplexity`` first pad the logits with zero
rows to the labels' length (``common_layers.pad_with_zeros``), so a label past the first is
scored against all-zero logits (argmax 0, top-k the lowest ids); ``rouge_*`` and
``multilabel_accuracy_matchk`` read the one argmax as it is.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.metrics.eval_metrics import ACC_MULTILABEL_MATCH3

__all__ = ["ACC_MULTILABEL_MATCH3", "accuracy_matchk", "pad_with_zeros"]


def pad_with_zeros(logits: tf.Tensor, labels: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """T2T's ``pad_with_zeros``: logits and labels padded with zeros (rows, ids) to the same
    length on axis 1."""
    length = tf.maximum(tf.shape(logits)[1], tf.shape(labels)[1])
    logits = tf.pad(logits, [[0, 0], [0, length - tf.shape(logits)[1]], [0, 0]])
    labels = tf.pad(labels, [[0, 0], [0, length - tf.shape(labels)[1]]])
    return logits, labels


def accuracy_matchk(logits: tf.Tensor, labels: tf.Tensor, k: int = 3) -> tf.Tensor:
    """T2T's ``multilabel_accuracy_matchk`` per example: ``min(n / k, 1)``, n the times the
    argmax is among the non-zero labels (every example weighs 1)."""
    argmax = tf.argmax(logits, -1, output_type=labels.dtype)  # [B, 1]
    hits = tf.cast(tf.equal(argmax, labels), tf.float32)
    hits *= tf.cast(tf.not_equal(labels, 0), tf.float32)
    return tf.minimum(tf.reduce_sum(hits, axis=1) / float(k), 1.0)
