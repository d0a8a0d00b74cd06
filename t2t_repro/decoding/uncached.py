"""Decoding without the key/value cache: the whole prefix goes through the decoder each step.

T2T keeps this slow path (``_slow_greedy_infer``) for models without a cache; here it exists
to measure what the cache buys and to check that both give the same output. Without XLA the
step feeds the decoder the dynamic prefix (positions 0..i); under XLA, which needs static
shapes, it feeds the whole fixed-size buffer under the causal mask, as T2T does on TPU.
"""

from __future__ import annotations

import tensorflow as tf


def init_state(model, inputs: tf.Tensor) -> dict:
    """The encoder output and bias, computed once; the decoder is rerun every step."""
    encoder_output, encoder_bias = model.encode(inputs)
    return {"encoder_output": encoder_output, "encoder_bias": encoder_bias}


def make_step(model, static_shapes: bool):
    """``step(ids [N, D+1], i, state) -> (logits [N, V] for position i, state)``."""

    def step(ids, i, state):
        targets = ids[:, 1:] if static_shapes else ids[:, 1 : i + 2]
        hidden = model.decoder_hidden(
            targets, state["encoder_output"], state["encoder_bias"], decoding=True
        )
        hidden_i = tf.gather(hidden, i, axis=1)
        return tf.cast(model.softmax.logits(hidden_i), tf.float32), state

    return step
