"""T2T's layer norm (``common_layers.layer_norm``, epsilon 1e-6): Keras' LayerNormalization,
whose bf16 inputs take a fused path.

Why: with bf16 matmuls the step's non-matmul work sets its speed (on a CPU with AMX even more
so). Keras normalises a bf16 tensor in about ten TensorFlow kernels (a float32 copy, the mean,
the squared differences, their mean, the rsqrt, the scale and shift, the cast back) and its
gradient in as many again. Here the forward and the backward are one XLA kernel each, with the
same float32 arithmetic inside, reading the bf16 input once; the matmuls around them stay on
oneDNN. float32 inputs never take this path, so float32 results are Keras' to the bit.
"""

from __future__ import annotations

import keras
import tensorflow as tf


@tf.function(jit_compile=True)
def _bf16_forward(x, gamma, beta, epsilon):
    """(y in bf16, mean, 1/std): the statistics in float32 over the last axis."""
    x = tf.cast(x, tf.float32)
    mean = tf.reduce_mean(x, axis=-1, keepdims=True)
    variance = tf.reduce_mean(tf.math.squared_difference(x, mean), axis=-1, keepdims=True)
    rstd = tf.math.rsqrt(variance + epsilon)
    inv = rstd * gamma
    return tf.cast(x * inv + (beta - mean * inv), tf.bfloat16), mean, rstd


@tf.function(jit_compile=True)
def _bf16_backward(dy, x, gamma, mean, rstd):
    """(dx in bf16, dgamma, dbeta) of ``_bf16_forward``'s y, in float32."""
    dy = tf.cast(dy, tf.float32)
    x_hat = (tf.cast(x, tf.float32) - mean) * rstd
    outer = list(range(dy.shape.rank - 1))
    dgamma = tf.reduce_sum(dy * x_hat, axis=outer)
    dbeta = tf.reduce_sum(dy, axis=outer)
    g = dy * gamma
    dx = rstd * (
        g
        - tf.reduce_mean(g, axis=-1, keepdims=True)
        - x_hat * tf.reduce_mean(g * x_hat, axis=-1, keepdims=True)
    )
    return tf.cast(dx, tf.bfloat16), dgamma, dbeta


def fused_bf16_layer_norm(x, gamma, beta, epsilon: float):
    """Layer norm of bf16 ``x`` over its last axis, float32 ``gamma``/``beta``: two XLA kernels."""
    epsilon = tf.constant(epsilon, tf.float32)

    @tf.custom_gradient
    def norm(x, gamma, beta):
        y, mean, rstd = _bf16_forward(x, gamma, beta, epsilon)

        def grad(dy):
            with tf.name_scope("layer_norm_grad"):  # Names the kernel in a profile.
                return _bf16_backward(dy, x, gamma, mean, rstd)

        return y, grad

    return norm(x, gamma, beta)


@keras.saving.register_keras_serializable(package="t2t_repro")
class LayerNorm(keras.layers.LayerNormalization):
    """``keras.layers.LayerNormalization`` over the last axis (same weights, same checkpoint);
    bf16 inputs are normalised by ``fused_bf16_layer_norm``."""

    def call(self, inputs):
        fusable = (
            inputs.dtype == tf.bfloat16
            and self.center
            and self.scale
            and not self.rms_scaling
            and self.axis in (-1, [-1], len(inputs.shape) - 1, [len(inputs.shape) - 1])
        )
        if not fusable:
            return super().call(inputs)
        gamma = tf.cast(self.gamma, tf.float32)
        beta = tf.cast(self.beta, tf.float32)
        return fused_bf16_layer_norm(inputs, gamma, beta, self.epsilon)
