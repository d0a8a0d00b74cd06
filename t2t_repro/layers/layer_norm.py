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

In training, float32 inputs take Keras' ops with their gradient written out
(``float32_layer_norm``): the same kernels on the same values in the same order as automatic
differentiation, so the same bits, without the ~45 ops a call TensorFlow's generic gradients
add to a graph whose batch and length are unknown (a sixth of a toy model's training graph
was layer norm gradients; each op is traced, instantiated and run at every step).
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


def float32_layer_norm(
    x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, epsilon: float
) -> tf.Tensor:
    """Keras' float32 layer norm over the last axis (``keras/src/ops/nn.py``,
    ``_layer_normalization``: ``tf.nn.moments``, ``x * inv + (beta - mean * inv)`` with
    ``inv = rsqrt(var + eps) * gamma``), op for op, with its gradient written out: the kernels
    automatic differentiation runs (``math_grad.py``: ``_MulGrad``, ``_AddGrad``, ``_MeanGrad``,
    ``_SquaredDifferenceGrad``, ``RsqrtGrad``) on the same values in the same order, without
    the ops TensorFlow adds to work out, at run time, reductions over no axis and the mean's
    divisor for tensors of unknown batch and length (~45 of a call's ~79 gradient ops).

    ``x`` goes in three times, one per use (``x * inv``, the mean, the squared difference), so
    that the tape sums its gradient from those three parts, after the residual's, in one
    ``AddN`` in the order automatic differentiation gives them: the float32 sums are the same
    bits."""
    rank = x.shape.rank
    outer = list(range(rank - 1))
    broadcast = [1] * (rank - 1) + [x.shape[-1]]
    # Where automatic differentiation puts the gradient of this layer's ops (backprop.py:
    # "gradient_tape/" and the forward op's name scope). Grappler sorts an AddN's inputs by
    # name (arithmetic_optimizer.cc), so the parts of x's gradient are named as there: the
    # squared difference's ("moments/Reshape"), the mean's ("moments/truediv"), x * inv's
    # ("mul_2/Reshape"); with Grappler the tape's sum adds them in the same order too.
    scope = tf.get_current_name_scope()
    grad_scope = f"gradient_tape/{scope}/" if scope else ""

    @tf.custom_gradient
    def norm(x_scaled, x_mean, x_var, gamma, beta):
        mean, variance = tf.nn.moments(x_mean, [-1], keepdims=True)
        rstd = tf.math.rsqrt(variance + epsilon)
        gamma_b = tf.reshape(gamma, broadcast)
        inv = rstd * gamma_b
        neg_mean = -mean
        shift = neg_mean * inv + tf.reshape(beta, broadcast)
        out = x_scaled * inv + shift

        def grad(dy):
            with tf.name_scope(grad_scope or "layer_norm_grad"):
                shape = tf.shape(x_scaled)
                # out = x * inv + shift: dy reaches both unreduced (same shapes).
                with tf.name_scope("mul_2"):
                    dy_inv = tf.multiply(dy, inv, name="Mul")
                    dx_scaled = tf.reshape(dy_inv, shape, name="Reshape")
                dinv = tf.math.add_n([x_scaled * dy, neg_mean * dy])  # x * inv, then -mean * inv
                dneg_mean = tf.reduce_sum(dy_inv, [rank - 1], keepdims=True)
                dbeta = tf.reshape(tf.reduce_sum(dy, outer, keepdims=True), beta.shape)
                drstd = tf.reduce_sum(dinv * gamma_b, [rank - 1], keepdims=True)
                dgamma = tf.reshape(tf.reduce_sum(rstd * dinv, outer, keepdims=True), gamma.shape)
                dvariance = tf.raw_ops.RsqrtGrad(y=rstd, dy=drstd)
                with tf.name_scope("moments"):
                    # _MeanGrad's divisor as it computes it: the reduced size, at run time.
                    size = tf.cast(tf.reduce_prod(tf.gather(shape, [rank - 1])), dy.dtype)
                    dx_mean = tf.truediv(tf.broadcast_to(-dneg_mean, shape), size, name="truediv")
                    # Read off shift's shape: like automatic differentiation's shape ops, a
                    # second reader keeps Grappler from regrouping the forward's sum
                    # x * inv + (-mean * inv + beta) (MinimizeBroadcasts reorders only chains
                    # of single-reader ops), which would move the float32 bits.
                    dsquares = tf.broadcast_to(dvariance, tf.shape(shift)) / size
                    dx_var = tf.multiply(2.0 * dsquares, x_var - mean, name="mul_1")
                    dx_var = tf.reshape(dx_var, shape, name="Reshape")
                return dx_scaled, dx_mean, dx_var, dgamma, dbeta

        return out, grad

    return norm(x, x, x, gamma, beta)


@keras.saving.register_keras_serializable(package="t2t_repro")
class LayerNorm(keras.layers.LayerNormalization):
    """``keras.layers.LayerNormalization`` (same weights, same checkpoint); bf16 inputs
    normalised over the last axis by ``bf16_layer_norm``, float32 ones in training by
    ``float32_layer_norm`` (Keras' values and gradients, fewer graph ops)."""

    def call(self, inputs, training=None):
        last = (-1, [-1], len(inputs.shape) - 1, [len(inputs.shape) - 1])
        if (
            inputs.dtype not in (tf.bfloat16, tf.float32)
            or not (self.center and self.scale)
            or self.rms_scaling
            or self.axis not in last
            or (inputs.dtype == tf.float32 and not training)  # no gradient: Keras' own ops
        ):
            return super().call(inputs)
        if inputs.dtype == tf.float32:
            return float32_layer_norm(
                inputs,
                tf.convert_to_tensor(self.gamma),
                tf.convert_to_tensor(self.beta),
                self.epsilon,
            )
        gamma = tf.cast(self.gamma, tf.float32)
        beta = tf.cast(self.beta, tf.float32)
        return bf16_layer_norm(inputs, gamma, beta, self.epsilon)
