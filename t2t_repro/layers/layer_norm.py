"""T2T's layer norm (``tensor2tensor/layers/common_layers.py``, ``layer_norm``, epsilon
1e-6): Keras' LayerNormalization, whose bf16 inputs take a shorter path.

Why: with bf16 matmuls the step's non-matmul work sets its speed, and the layer norms were
its largest part (``bench/bench_train_step_profile.py``). Keras normalises a bf16 tensor by
the formula ``x * (rsqrt(var) * gamma) + (beta - mean * rsqrt(var) * gamma)``: the products
with gamma and beta are [rows, d] tensors, and its gradient, by automatic differentiation,
runs about twice the kernels of the forward. Here the forward is cast, moments, centre and
scale, affine, cast back; the gradient is the closed form of the layer norm's derivative
(``dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))``, ``g = dy * gamma``), about a third
fewer kernels in all, with the statistics and the gradient in float32 as Keras computes
them. Plain TensorFlow kernels, not XLA: in training the layer norms see the pad remover's
kept rows (``layers/pad_remover.py``), whose number changes with every batch, and an XLA
kernel would be compiled again for each. float32 inputs never take this path: float32
results are Keras' (and T2T's) to the bit.
"""

from __future__ import annotations

import keras
import tensorflow as tf


def bf16_layer_norm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, epsilon: float) -> tf.Tensor:
    """Layer norm of bf16 ``x`` over its last axis with float32 ``gamma``/``beta``; the
    result in bf16, the arithmetic in float32."""

    @tf.custom_gradient
    def norm(x, gamma, beta):
        xf = tf.cast(x, tf.float32)
        mean, variance = tf.nn.moments(xf, [-1], keepdims=True)
        rstd = tf.math.rsqrt(variance + epsilon)
        x_hat = (xf - mean) * rstd

        def grad(dy):
            with tf.name_scope("layer_norm_grad"):  # Names the kernels in a profile.
                dy = tf.cast(dy, tf.float32)
                outer = list(range(dy.shape.rank - 1))
                dbeta = tf.reduce_sum(dy, axis=outer)
                dgamma = tf.reduce_sum(dy * x_hat, axis=outer)
                g = dy * gamma
                mean_g = tf.reduce_mean(g, axis=-1, keepdims=True)
                mean_gx = tf.reduce_mean(g * x_hat, axis=-1, keepdims=True)
                dx = (g - mean_g - x_hat * mean_gx) * rstd
                return tf.cast(dx, tf.bfloat16), dgamma, dbeta

        return tf.cast(x_hat * gamma + beta, tf.bfloat16), grad

    return norm(x, gamma, beta)


@keras.saving.register_keras_serializable(package="t2t_repro")
class LayerNorm(keras.layers.LayerNormalization):
    """``keras.layers.LayerNormalization`` (same weights, same checkpoint); bf16 inputs
    normalised over the last axis by ``bf16_layer_norm``."""

    def call(self, inputs):
        last = (-1, [-1], len(inputs.shape) - 1, [len(inputs.shape) - 1])
        if (
            inputs.dtype != tf.bfloat16
            or not (self.center and self.scale)
            or self.rms_scaling
            or self.axis not in last
        ):
            return super().call(inputs)
        gamma = tf.cast(self.gamma, tf.float32)
        beta = tf.cast(self.beta, tf.float32)
        return bf16_layer_norm(inputs, gamma, beta, self.epsilon)
