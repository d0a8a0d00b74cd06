"""The suite's eager variables create their handles without a debug name, and nothing they
hold or compute changes (tests/variable_handles.py). Each test starts from TensorFlow's own
handle op, whatever this process runs with (``T2T_TEST_VARIABLE_DEBUG_NAMES``), and leaves
it as it found it."""

import functools

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.ops import gen_resource_variable_ops

from tests.variable_handles import KEEP_ENV, share_variable_handle_kernels


@pytest.fixture
def debug_names(monkeypatch):
    """TensorFlow's handle op for the test, behind a recorder of each call's ``debug_name``
    (None for a graph's), read at call time by ``resource_variable_ops``."""
    create = gen_resource_variable_ops.var_handle_op
    while getattr(create, "shares_handle_kernels", False):
        create = create.__wrapped__
    seen = []

    @functools.wraps(create)  # its signature too
    def recording(*args, **kwargs):
        seen.append(kwargs.get("debug_name") if tf.executing_eagerly() else None)
        return create(*args, **kwargs)

    monkeypatch.setattr(gen_resource_variable_ops, "var_handle_op", recording)
    return seen, recording


def _weights_names_and_checkpoint(tmp_path) -> tuple[list, list, dict]:
    """A Keras layer's weights after one update, their names, and its checkpoint's keys."""
    import keras

    layer = keras.layers.Dense(3, name="dense_here")
    layer.build((None, 4))
    for i, w in enumerate(layer.weights):
        w.assign(
            np.linspace(-1.0, 1.0 + i, int(np.prod(w.shape)), dtype=np.float32).reshape(w.shape)
        )
    x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
    layer.kernel.assign_sub(tf.matmul(x, layer(x), transpose_a=True) * 0.01)
    path = tf.train.Checkpoint(layer=layer).write(str(tmp_path / "ckpt"))
    keys = dict(tf.train.list_variables(path))
    return [w.numpy().tobytes() for w in layer.weights], [w.name for w in layer.weights], keys


def test_eager_handles_have_no_debug_name_and_hold_the_same(debug_names, monkeypatch, tmp_path):
    debug_names, recording = debug_names
    monkeypatch.delenv(KEEP_ENV, raising=False)
    own = _weights_names_and_checkpoint(tmp_path / "own")
    assert any(debug_names) and all(debug_names)  # TensorFlow's own: each its name
    del debug_names[:]
    assert share_variable_handle_kernels() and share_variable_handle_kernels()  # idempotent
    assert gen_resource_variable_ops.var_handle_op.__wrapped__ is recording  # wrapped once
    shared = _weights_names_and_checkpoint(tmp_path / "shared")
    assert debug_names and set(debug_names) == {""}
    assert shared == own  # values bit for bit, names, checkpoint keys and shapes
    del debug_names[:]
    with tf.Graph().as_default():  # a graph's handle keeps its name
        tf.Variable(1.0, name="in_a_graph")
    assert debug_names == [None]


def test_asked_to_keep_them_it_changes_nothing(debug_names, monkeypatch):
    debug_names, recording = debug_names
    monkeypatch.setenv(KEEP_ENV, "1")
    assert not share_variable_handle_kernels()
    assert gen_resource_variable_ops.var_handle_op is recording
    tf.Variable(1.0, name="kept")
    assert debug_names and all(debug_names)
