"""The 16-bit-mask dropout layer (t2t_repro/layers/dropout.py)."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.dropout import Dropout


def test_inference_and_rate_zero_are_identity():
    x = tf.random.normal([4, 8])
    np.testing.assert_array_equal(Dropout(0.3)(x, training=False).numpy(), x.numpy())
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True).numpy(), x.numpy())


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_drop_fraction_and_scaling(rate):
    n = 1 << 20
    y = Dropout(rate, seed=3)(tf.ones([n // 512, 512]), training=True).numpy()
    dropped = float((y == 0).mean())
    # Binomial standard deviation is sqrt(rate (1 - rate) / n) < 5e-4; allow 5 of them.
    assert abs(dropped - rate) < 2.5e-3
    np.testing.assert_allclose(np.unique(y[y != 0]), [1 / (1 - rate)], rtol=1e-6)


def test_odd_sizes_and_float16():
    y = Dropout(0.5, seed=1, dtype="mixed_float16")(tf.ones([3, 5], tf.float16), training=True)
    assert y.dtype == tf.float16 and y.shape == (3, 5)
    assert set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}


def test_masks_follow_the_seed_generator_state():
    layer = Dropout(0.5, seed=7)
    x = tf.ones([64, 64])
    state = layer.seed_generator.state.numpy()
    first = layer(x, training=True).numpy()
    second = layer(x, training=True).numpy()
    assert not np.array_equal(first, second)  # the state advances per call
    layer.seed_generator.state.assign(state)  # what restoring a checkpoint does
    np.testing.assert_array_equal(layer(x, training=True).numpy(), first)


def test_same_mask_in_graph_xla_and_dynamic_shapes():
    x = tf.random.normal([6, 40])
    masks = []
    for fn in (
        lambda drop, t: drop(t, training=True),
        tf.function(lambda drop, t: drop(t, training=True), jit_compile=True),
        tf.function(lambda drop, t: drop(t, training=True)),
    ):
        layer = Dropout(0.25, seed=11)
        masks.append(fn(layer, x).numpy() != 0)
    layer = Dropout(0.25, seed=11)
    dynamic = tf.function(
        lambda t: layer(t, training=True), input_signature=[tf.TensorSpec([None, 40])]
    )
    masks.append(dynamic(x).numpy() != 0)
    for m in masks[1:]:
        np.testing.assert_array_equal(m, masks[0])


def test_noise_shape_is_refused():
    with pytest.raises(ValueError, match="noise_shape"):
        Dropout(0.1, noise_shape=(1, 4))
