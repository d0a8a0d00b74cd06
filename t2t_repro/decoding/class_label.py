"""A text classifier's "search": each input's most probable class, as T2T decodes a model with
a class-label target (``utils/t2t_model.py``, ``T2TModel.infer``: no beam search for a
CLASS_LABEL target, ``_slow_greedy_infer`` with ``decode_length`` 1, i.e. the argmax of the
logits). It has ``Searcher``'s interface, so ``LineDecoder`` batches, orders and writes its
outputs as it does a search's; the score is the label's log-probability. A multi-label model
(MULTI_LABEL) gets the same argmax: T2T's ``infer`` gives it no one-step decode and fails on it,
and its ``multilabel_accuracy_matchk`` scores that argmax (``docs/classification.md``).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class LabelSearcher:
    """``searcher(inputs [B, L]) -> (ids [B, 1, 1] (the label), scores [B, 1])``."""

    def __init__(self, model) -> None:
        self.model = model
        self._fn = tf.function(self._labels, reduce_retracing=True, autograph=False)

    def _labels(self, inputs: tf.Tensor):
        targets = tf.zeros([tf.shape(inputs)[0], 1], tf.int32)  # not read by the classifier
        logits = self.model({"inputs": inputs, "targets": targets}, training=False)[:, 0]
        log_probs = tf.nn.log_softmax(logits)
        label = tf.argmax(logits, -1, output_type=tf.int32)
        score = tf.gather(log_probs, label, batch_dims=1)
        return label[:, None, None], score[:, None]

    def __call__(self, inputs, *constraint_inputs, occurrences=None):
        del constraint_inputs, occurrences
        ids, scores = self._fn(tf.constant(np.asarray(inputs, np.int32)))
        return ids.numpy(), scores.numpy()
