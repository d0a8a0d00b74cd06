"""A text classifier's export: the outputs of its signatures (``serving/exporter.py``).

A model with a class-label target (``decoding/class_label.py``) is exported like a translation
model, text in and the decoder's output out: ``serving_default(sources [B])`` returns

- ``translations`` string [B]: the label's name (``ClassLabelEncoder``'s, a constant of the
  graph), what ``t2t-decoder`` writes for the line, so ``t2t-query-server`` and any client of
  a translation export read it unchanged;
- ``scores`` float32 [B]: the label's log-probability (``write_beam_scores``'s number);
- ``label_ids`` int32 [B]: the label's id, the argmax of the logits (T2T's ``infer``);
- ``probabilities`` float32 [B, classes]: the softmax of the logits.

A blank source is EOS alone and gets its label, as in T2T and the decoder. ``nbest`` gives
the one label as a column ([B, 1]), as the decoder's ``return_beams`` does. T2T's classifier
averages its encoder output over the batch's padded length, so, as in one batch of
``t2t-decoder``, a line's numbers depend on the longest line sent with it: send one line per
request for the decoder's per-line outputs.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.decoding.class_label import label_log_probs

LABEL_IDS = "label_ids"
PROBABILITIES = "probabilities"


def label_names(encoder) -> list[str]:
    """Every class's name, by id (T2T's ``ClassLabelEncoder.decode_list``)."""
    return list(encoder.decode_list(range(encoder.vocab_size)))


def label_outputs(model, inputs: tf.Tensor, names) -> dict:
    """``serving_default``'s outputs for ``inputs`` [B, L] (ids with EOS); ``names``:
    decodes [B, 1] ragged ids to strings (``exporter.GraphTokenDecoder``)."""
    label, log_probs = label_log_probs(model, inputs)
    name = names.decode(tf.RaggedTensor.from_tensor(label[:, None]))
    return {
        "translations": name,
        "scores": tf.gather(log_probs, label, batch_dims=1),
        LABEL_IDS: label,
        PROBABILITIES: tf.exp(log_probs),
    }


def as_nbest(outputs: dict) -> dict:
    """``nbest``'s outputs: the one label as a column of translations and scores [B, 1]."""
    return {key: outputs[key][:, None] for key in ("translations", "scores")}
