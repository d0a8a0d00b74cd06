"""t2t_repro.layers.dense.Dense: Keras' Dense to the bit, in fewer graph ops.

The bitwise claims compare the same computation: both layers give one MatMul kernel the
same [rows, d_in] matrix and kernel (Keras' through tf.tensordot), so they hold on any CPU.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.dense import Dense


def pair(units, activation, use_bias, shape, seed=0):
    """A Keras Dense and ours with the same random weights."""
    rng = np.random.default_rng(seed)
    ours = Dense(units, activation, use_bias)
    theirs = keras.layers.Dense(units, activation, use_bias)
    for layer in (ours, theirs):
        layer.build(shape)
    for a, b in zip(ours.weights, theirs.weights, strict=True):
        value = rng.normal(size=a.shape).astype(np.float32)
        a.assign(value)
        b.assign(value)
    return ours, theirs


def outputs_and_gradients(layer, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) ** 2)
    return [y, *tape.gradient(loss, [x, *layer.trainable_variables])]


@pytest.fixture
def policy(request):
    keras.mixed_precision.set_global_policy(request.param)
    yield request.param
    keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"], indirect=True)
@pytest.mark.parametrize(
    "units, activation, use_bias, shape",
    [(8, None, False, (3, 5, 8)), (16, "relu", True, (2, 1, 8)), (8, None, True, (2, 3, 4, 8))],
)
@pytest.mark.parametrize("mode", ["eager", "traced", "xla"])
def test_outputs_and_gradients_are_kerass_bits(policy, units, activation, use_bias, shape, mode):
    ours, theirs = pair(units, activation, use_bias, shape)
    x = tf.constant(np.random.default_rng(1).normal(size=shape).astype(np.float32))
    run = outputs_and_gradients
    if mode != "eager":
        run = lambda layer, x: tf.function(  # noqa: E731
            outputs_and_gradients, jit_compile=mode == "xla", autograph=False
        )(layer, x)
    got, expected = run(ours, x), run(theirs, x)
    assert [t.dtype for t in got] == [t.dtype for t in expected]
    assert got[0].dtype == (tf.bfloat16 if policy == "mixed_bfloat16" else tf.float32)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("units", [8, 16])
def test_a_rank_3_projection_is_fewer_ops_with_the_static_shape(units):
    """Batch and length unknown, as in a traced search: Keras' tensordot takes 21 ops."""
    ours, theirs = pair(units, None, False, (None, None, 8))
    spec = tf.TensorSpec([None, None, 8], tf.float32)
    graphs = [
        tf.function(layer, autograph=False).get_concrete_function(spec).graph
        for layer in (ours, theirs)
    ]
    ops = [len(graph.get_operations()) for graph in graphs]
    # Besides the kernel's read, 5 ops instead of 21 (12 when the width changes).
    assert ops[1] - ops[0] == (16 if units == 8 else 9), ops
    shapes = [graph.outputs[0].shape.as_list() for graph in graphs]
    assert shapes[0] == shapes[1] == [None, None, units]


def test_rank_2_inputs_and_its_config_are_kerass():
    ours, theirs = pair(8, "relu", True, (4, 8))
    x = tf.constant(np.random.default_rng(2).normal(size=(4, 8)).astype(np.float32))
    np.testing.assert_array_equal(ours(x).numpy(), theirs(x).numpy())
    config = keras.saving.serialize_keras_object(ours)
    again = keras.saving.deserialize_keras_object(config)
    assert type(again) is Dense and again.get_config() == ours.get_config()
