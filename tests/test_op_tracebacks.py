"""The suite's graphs carry no creation stacks, and nothing they compute changes
(tests/op_tracebacks.py). Both tests start from TensorFlow's own op creation, whatever this
process runs with (``T2T_TEST_OP_TRACEBACKS``), and leave it as they found it."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import ops

from tests.op_tracebacks import KEEP_ENV, skip_op_tracebacks


@pytest.fixture
def tensorflows_own(monkeypatch):
    """TensorFlow's ``_create_c_op`` for the test; this process's again after it."""
    create = ops._create_c_op
    if getattr(create, "skips_op_tracebacks", False):
        create = create.__wrapped__
    monkeypatch.setattr(ops, "_create_c_op", create)
    return create


def _matmul_stack_and_values() -> tuple[int, bytes]:
    x = tf.constant(np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4))
    f = tf.function(lambda x: tf.nn.softmax(tf.matmul(x, x, transpose_b=True)) * 3.0)
    graph = f.get_concrete_function(x).graph
    (matmul,) = [op for op in graph.get_operations() if op.type == "MatMul"]
    return len(matmul.traceback or ()), f(x).numpy().tobytes()


def test_ops_have_no_creation_stack_and_compute_the_same(tensorflows_own, monkeypatch):
    monkeypatch.delenv(KEEP_ENV, raising=False)
    kept_stack, kept_values = _matmul_stack_and_values()
    assert skip_op_tracebacks() and skip_op_tracebacks()  # idempotent
    assert ops._create_c_op.__wrapped__ is tensorflows_own  # wrapped once
    skipped_stack, skipped_values = _matmul_stack_and_values()
    assert kept_stack > 0 and skipped_stack == 0
    assert skipped_values == kept_values  # the same graph, bit for bit


def test_asked_to_keep_them_it_changes_nothing(tensorflows_own, monkeypatch):
    monkeypatch.setenv(KEEP_ENV, "1")
    assert not skip_op_tracebacks()
    assert ops._create_c_op is tensorflows_own
    assert _matmul_stack_and_values()[0] > 0
