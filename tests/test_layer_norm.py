"""t2t_repro's LayerNorm: Keras' to the bit in float32; bf16 inputs take a shorter path with
the arithmetic in float32, so outputs and gradients agree with Keras' within one bf16
rounding (the bf16 results) or float32 rounding (the float32 weight gradients)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.layer_norm import LayerNorm
from tests.float_bounds import assert_same_bits
from tests.grappler import grappler
from tests.model_utils import traced_op_count


def _norm_and_grads(layer, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        weights = tf.cast(tf.range(y.shape[-1]), tf.float32) / y.shape[-1]
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * weights)
    return [y, *tape.gradient(loss, [x, layer.gamma, layer.beta])]


def _pair(x):
    rng = np.random.default_rng(1)
    layers = (LayerNorm(epsilon=1e-6), keras.layers.LayerNormalization(epsilon=1e-6))
    gamma, beta = rng.normal(size=(2, x.shape[-1])).astype(np.float32)
    for layer in layers:
        layer.build(x.shape)
        layer.gamma.assign(gamma)
        layer.beta.assign(beta)
    return layers


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_matches_keras_layer_normalization(precision):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(4, 8, 32)).astype(np.float32) * 2 + 0.5)
    policy = keras.mixed_precision.global_policy()
    try:
        if precision == "bfloat16":
            keras.mixed_precision.set_global_policy("mixed_bfloat16")
            x = tf.cast(x, tf.bfloat16)
        ours, ref = _pair(x)
        got, want = _norm_and_grads(ours, x), _norm_and_grads(ref, x)
    finally:
        keras.mixed_precision.set_global_policy(policy)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        a, b = tf.cast(a, tf.float32).numpy(), tf.cast(b, tf.float32).numpy()
        if precision == "float32":
            np.testing.assert_array_equal(a, b)
        elif a.ndim == 1:
            # gamma/beta gradients: float32 sums of 32 products, in another order.
            np.testing.assert_allclose(a, b, rtol=0, atol=32 * 2**-23 * np.abs(b).max())
        else:
            # bf16 results: both round float32 values that differ by float32 rounding, so
            # they are at most one bf16 step (2**-7 relative: 8 significant bits) apart.
            np.testing.assert_allclose(a, b, rtol=2**-7, atol=0)


@pytest.mark.parametrize("grappler_on", [True, False])
@pytest.mark.parametrize("shape", [(7, 32), (3, 5, 48)])
def test_float32_training_gradient_is_automatic_differentiations_bit_for_bit(shape, grappler_on):
    """In training (a traced step, unknown batch and length, x also read by a residual), the
    written-out float32 gradient gives Keras' output and automatic differentiation's gradients
    to the bit, with Grappler's rewrites or without, in far fewer graph ops."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=shape) * 2 + 0.5, tf.float32)
    dz = tf.constant(rng.normal(size=shape), tf.float32)
    d = shape[-1]
    w = tf.constant(rng.normal(size=(d, d)) * 0.2, tf.float32)
    ours, ref = _pair(x)
    spec = tf.TensorSpec([None] * (len(shape) - 1) + [d], tf.float32)

    def step(layer):
        @tf.function(input_signature=[spec, spec])
        def run(x, dz):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = layer(x, training=True)
                z = x + tf.tensordot(y, w, 1)  # a residual around a sublayer, as in the model
            return [y, *tape.gradient(z, [x, layer.gamma, layer.beta], output_gradients=dz)]

        return run

    with grappler(on=grappler_on):
        ours_step, ref_step = step(ours), step(ref)
        got, want = ours_step(x, dz), ref_step(x, dz)
    assert_same_bits(got, want)

    assert traced_op_count(ours_step) < traced_op_count(ref_step) - 20  # 113 against 148 here
