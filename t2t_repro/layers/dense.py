"""A Dense layer whose [..., d_in] input is projected by one MatMul between two reshapes.

Why: Keras' ``Dense`` hands an input of rank 3 ([B, L, d]) to ``tf.tensordot``, which for a
batch and length unknown when traced builds 21 graph ops, besides the kernel's read, around
one ``MatMul`` of the [B * L, d] matrix (shape arithmetic, an identity transpose, two
reshapes). Here the same ``MatMul`` gets the same operands, so it gives the same bits, in 5
ops (12 when the width changes). Every traced search, evaluation and export pays per op:
a two-layer model's beam-search trace is a fifth smaller, and each decode step runs fewer
kernels. T2T's projections (``tensor2tensor/layers/common_layers.py``, ``dense``: TF1's
``tf.layers.dense``) are the same ``tf.tensordot``, so the same ``MatMul``.
"""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="t2t_repro")
class Dense(keras.layers.Dense):
    """``keras.layers.Dense``; an input of rank > 2 takes one reshape-MatMul-reshape path.

    Rank-2 inputs (the pad remover's rows), LoRA, quantized kernels and mixed input and
    kernel dtypes keep Keras' own ``call``."""

    def call(self, inputs, training=None):
        rank = inputs.shape.rank
        if rank is None or rank <= 2 or self.lora_enabled or self.quantization_mode:
            return super().call(inputs, training=training)
        # What keras.ops.matmul converts the kernel to (autocast to the compute dtype).
        kernel = keras.ops.convert_to_tensor(self.kernel)
        if inputs.dtype != kernel.dtype:
            return super().call(inputs, training=training)
        x = tf.matmul(tf.reshape(inputs, [-1, kernel.shape[0]]), kernel)
        if self.units == inputs.shape[-1]:
            x = tf.reshape(x, tf.shape(inputs))
        else:
            x = tf.reshape(x, tf.concat([tf.shape(inputs)[:-1], [self.units]], 0))
        # Then as keras.layers.Dense.call.
        if self.bias is not None:
            x = keras.ops.add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        return x
