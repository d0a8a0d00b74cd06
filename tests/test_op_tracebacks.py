"""The suite's graphs carry no creation stacks, and nothing they compute changes
(tests/op_tracebacks.py)."""

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import ops

from tests.op_tracebacks import KEEP_ENV, skip_op_tracebacks


def _matmul_stack_and_values() -> tuple[int, bytes]:
    x = tf.constant(np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4))
    f = tf.function(lambda x: tf.nn.softmax(tf.matmul(x, x, transpose_b=True)) * 3.0)
    graph = f.get_concrete_function(x).graph
    (matmul,) = [op for op in graph.get_operations() if op.type == "MatMul"]
    return len(matmul.traceback or ()), f(x).numpy().tobytes()


def test_ops_have_no_creation_stack_and_compute_the_same(monkeypatch):
    assert skip_op_tracebacks()  # conftest.py did it already: idempotent
    skipped_stack, skipped_values = _matmul_stack_and_values()
    monkeypatch.setattr(ops, "_create_c_op", ops._create_c_op.__wrapped__)  # TensorFlow's own
    kept_stack, kept_values = _matmul_stack_and_values()
    assert kept_stack > 0 and skipped_stack == 0
    assert skipped_values == kept_values  # the same graph, bit for bit


def test_asked_to_keep_them_it_changes_nothing(monkeypatch):
    monkeypatch.setenv(KEEP_ENV, "1")
    monkeypatch.setattr(ops, "_create_c_op", ops._create_c_op.__wrapped__)
    assert not skip_op_tracebacks()
    assert not getattr(ops._create_c_op, "skips_op_tracebacks", False)
