"""A text classifier's "search": each input's most probable class, as T2T decodes a model with
a class-label target (``utils/t2t_model.py``, ``T2TModel.infer``: no beam search for a
CLASS_LABEL target, ``_slow_greedy_infer`` with ``decode_length`` 1, i.e. the argmax of the
logits). It has ``Searcher``'s interface, so ``LineDecoder`` batches, orders and writes its
outputs as it does a search's; the score is the label's log-probability. A multi-label model
(MULTI_LABEL) gets the same argmax: T2T's ``infer`` gives it no one-step decode and fails on it,
and its ``multilabel_accuracy_matchk`` scores that argmax (``docs/classification.md``). The
SavedModel export computes the same in its graph (``label_log_probs``; ``serving/labels.py``).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig


def predicts_labels(model) -> bool:
    """Whether ``model``'s target is a class label (the problem hparam ``class_label_target``,
    set for T2T's CLASS_LABEL target modality: ``hparams_lib/build.py``)."""
    return bool(model.hparams.get("class_label_target", False))


def label_log_probs(model, inputs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """``inputs`` [B, L] -> (the argmax label [B] int32, log-probabilities [B, classes])."""
    targets = tf.zeros([tf.shape(inputs)[0], 1], tf.int32)  # not read by the classifier
    logits = model({"inputs": inputs, "targets": targets}, training=False)[:, 0]
    return tf.argmax(logits, -1, output_type=tf.int32), tf.nn.log_softmax(logits)


class LabelSearcher:
    """``searcher(inputs [B, L]) -> (ids [B, 1, 1] (the label), scores [B, 1])``."""

    # T2T's search of a class label: one greedy step (no beams, no sampling, no length).
    config = SearchConfig(beam_size=1, extra_length=0)

    def __init__(self, model) -> None:
        self.model = model
        self._fn = tf.function(self._labels, reduce_retracing=True, autograph=False)

    def _labels(self, inputs: tf.Tensor):
        label, log_probs = label_log_probs(self.model, inputs)
        score = tf.gather(log_probs, label, batch_dims=1)
        return label[:, None, None], score[:, None]

    def __call__(self, inputs, *constraint_inputs, occurrences=None):
        del constraint_inputs, occurrences
        ids, scores = self._fn(tf.constant(np.asarray(inputs, np.int32)))
        return ids.numpy(), scores.numpy()
