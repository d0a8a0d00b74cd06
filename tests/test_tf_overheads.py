"""The suite's graphs carry no creation stacks, its eager variables' handles no debug name, its
ops no dtype message unless one is refused, its traces ask no op without a resource input for
its read-only ones nor its resolvers, its ops do not enter their graph again, and nothing they
hold, compute or say changes (tests/tf_overheads.py; its Grappler passes:
test_idle_grappler_passes.py; its thread pools: test_thread_spinning.py). Each test starts
from TensorFlow's own function, whatever this process runs with, and leaves it as it found it."""

import functools

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_resource_variable_ops

from tests.tf_overheads import (
    KEEP_ATTR_LOOKUPS_ENV,
    KEEP_GRAPH_REENTRY_ENV,
    KEEP_OP_TRACEBACKS_ENV,
    KEEP_RESOURCE_RESOLVERS_ENV,
    KEEP_TYPE_MESSAGES_ENV,
    KEEP_VARIABLE_DEBUG_NAMES_ENV,
    check_types_first,
    enter_a_default_graph_as_it_is,
    look_up_resource_inputs_first,
    resolve_only_ops_with_resources,
    share_variable_handle_kernels,
    skip_op_tracebacks,
)


def _tensorflows_own(create, marker: str):
    while getattr(create, marker, False):
        create = create.__wrapped__
    return create


def _behind_a_recorder(monkeypatch, owner, name: str, marker: str, note):
    """TensorFlow's own ``owner.name`` for the test (this process's wrapper, ``marker``, taken
    off), behind a recorder that keeps ``note(*args, **kwargs)`` of each call: (the notes, the
    recorder)."""
    own = _tensorflows_own(getattr(owner, name), marker)
    notes = []

    @functools.wraps(own)  # its signature too
    def recording(*args, **kwargs):
        notes.append(note(*args, **kwargs))
        return own(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return notes, recording


@pytest.fixture
def own_create_c_op(monkeypatch):
    """TensorFlow's ``_create_c_op`` for the test; this process's again after it."""
    create = _tensorflows_own(ops._create_c_op, "skips_op_tracebacks")
    monkeypatch.setattr(ops, "_create_c_op", create)
    return create


def _matmul_stack_and_values() -> tuple[int, bytes]:
    x = tf.constant(np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4))
    f = tf.function(lambda x: tf.nn.softmax(tf.matmul(x, x, transpose_b=True)) * 3.0)
    graph = f.get_concrete_function(x).graph
    (matmul,) = [op for op in graph.get_operations() if op.type == "MatMul"]
    return len(matmul.traceback or ()), f(x).numpy().tobytes()


def test_ops_have_no_creation_stack_and_compute_the_same(own_create_c_op, monkeypatch):
    monkeypatch.delenv(KEEP_OP_TRACEBACKS_ENV, raising=False)
    kept_stack, kept_values = _matmul_stack_and_values()
    assert skip_op_tracebacks() and skip_op_tracebacks()  # idempotent
    assert ops._create_c_op.__wrapped__ is own_create_c_op  # wrapped once
    skipped_stack, skipped_values = _matmul_stack_and_values()
    assert kept_stack > 0 and skipped_stack == 0
    assert skipped_values == kept_values  # the same graph, bit for bit


def test_asked_to_keep_op_tracebacks_it_changes_nothing(own_create_c_op, monkeypatch):
    monkeypatch.setenv(KEEP_OP_TRACEBACKS_ENV, "1")
    assert not skip_op_tracebacks()
    assert ops._create_c_op is own_create_c_op
    assert _matmul_stack_and_values()[0] > 0


@pytest.fixture
def debug_names(monkeypatch):
    """TensorFlow's handle op for the test, behind a recorder of each call's ``debug_name``
    (None for a graph's), read at call time by ``resource_variable_ops``."""
    return _behind_a_recorder(
        monkeypatch,
        gen_resource_variable_ops,
        "var_handle_op",
        "shares_handle_kernels",
        lambda *_, **kwargs: kwargs.get("debug_name") if tf.executing_eagerly() else None,
    )


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
    monkeypatch.delenv(KEEP_VARIABLE_DEBUG_NAMES_ENV, raising=False)
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


def test_asked_to_keep_debug_names_it_changes_nothing(debug_names, monkeypatch):
    debug_names, recording = debug_names
    monkeypatch.setenv(KEEP_VARIABLE_DEBUG_NAMES_ENV, "1")
    assert not share_variable_handle_kernels()
    assert gen_resource_variable_ops.var_handle_op is recording
    tf.Variable(1.0, name="kept")
    assert debug_names and all(debug_names)


@pytest.fixture
def type_checks(monkeypatch):
    """TensorFlow's ``_SatisfiesTypeConstraint`` for the test, behind a counter of its calls."""
    from tensorflow.python.framework import op_def_library

    return _behind_a_recorder(
        monkeypatch,
        op_def_library,
        "_SatisfiesTypeConstraint",
        "checks_first",
        lambda dtype, attr_def, param_name: param_name,
    )


def _graph_and_refusal() -> tuple[list, str]:
    """A small function's graph (op types, inputs, attributes) and TensorFlow's message for a
    dtype that an op refuses."""
    x = tf.constant(np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4))
    f = tf.function(lambda x: tf.nn.relu(tf.matmul(x, x, transpose_b=True)) + 1.0)
    graph = f.get_concrete_function(x).graph.as_graph_def()
    nodes = sorted((n.name, n.op, list(n.input), n.attr["T"].type) for n in graph.node)
    with pytest.raises(TypeError) as refused:
        tf.function(lambda x: tf.bitwise.bitwise_and(x, x)).get_concrete_function(x)
    return nodes, str(refused.value).strip().splitlines()[-1]  # (after autograph's frames)


def test_dtype_messages_are_built_only_for_a_refused_dtype(type_checks, monkeypatch):
    from tensorflow.python.framework import op_def_library

    calls, counting = type_checks
    monkeypatch.delenv(KEEP_TYPE_MESSAGES_ENV, raising=False)
    own = _graph_and_refusal()
    assert len(calls) > 3  # TensorFlow's own: called for every typed input
    del calls[:]
    assert check_types_first() and check_types_first()  # idempotent
    assert op_def_library._SatisfiesTypeConstraint.__wrapped__ is counting  # wrapped once
    first = _graph_and_refusal()
    assert calls == ["x"]  # only for the refused float32, in bitwise_and
    assert first == own  # the same ops, and TensorFlow's own message
    assert "not in list of allowed values" in first[1]


def test_asked_to_keep_type_messages_it_changes_nothing(type_checks, monkeypatch):
    from tensorflow.python.framework import op_def_library

    calls, counting = type_checks
    monkeypatch.setenv(KEEP_TYPE_MESSAGES_ENV, "1")
    assert not check_types_first()
    assert op_def_library._SatisfiesTypeConstraint is counting
    _graph_and_refusal()
    assert len(calls) > 3


@pytest.fixture
def resource_lookups(monkeypatch):
    """TensorFlow's ``get_read_write_resource_inputs`` for the test, behind a recorder of the
    op types it is asked about (and TensorFlow's own ``_get_resource_inputs``, which asks it)."""
    from tensorflow.python.framework import auto_control_deps, auto_control_deps_utils

    own = _tensorflows_own(
        auto_control_deps._get_resource_inputs, "resolves_only_ops_with_resources"
    )
    monkeypatch.setattr(auto_control_deps, "_get_resource_inputs", own)
    return _behind_a_recorder(
        monkeypatch,
        auto_control_deps_utils,
        "get_read_write_resource_inputs",
        "looks_up_resource_inputs_first",
        lambda op: op.type,
    )


def _ordered_graph_and_values() -> tuple[list, list]:
    """A function whose order is automatic control dependencies' work: reads and writes of two
    variables, a stateful op with no resource input, a loop and plain math. Its nodes (inputs,
    control inputs included) and what it computes."""
    v, w = tf.Variable([1.0, 2.0]), tf.Variable(3.0)

    @tf.function
    def f(x):
        a = v.read_value() * x
        v.assign_add(a)
        w.assign(tf.reduce_sum(v) + tf.random.uniform([], seed=1, maxval=0.0))
        i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 0.5 + w), (0, x))
        return tf.nn.relu(v + w - 4.0) + y, i

    x = tf.constant([0.5, -1.0])
    graph = f.get_concrete_function(x).graph.as_graph_def()
    functions = [graph.node] + [function.node_def for function in graph.library.function]
    nodes = sorted((n.name, n.op, list(n.input)) for group in functions for n in group)
    return nodes, [t.numpy().tobytes() for t in f(x)] + [v.numpy().tobytes(), w.numpy().tobytes()]


def test_only_ops_with_resource_inputs_are_asked_and_the_order_is_the_same(
    resource_lookups, monkeypatch
):
    from tensorflow.python.framework import auto_control_deps_utils

    asked, recording = resource_lookups
    monkeypatch.delenv(KEEP_ATTR_LOOKUPS_ENV, raising=False)
    own = _ordered_graph_and_values()
    assert {"Mul", "AddV2", "Relu", "RandomUniform"} <= set(asked)  # TensorFlow's own: all
    del asked[:]
    assert look_up_resource_inputs_first() and look_up_resource_inputs_first()  # idempotent
    assert auto_control_deps_utils.get_read_write_resource_inputs.__wrapped__ is recording
    first = _ordered_graph_and_values()
    # The loop reads w: a functional op, one that carries the attribute.
    assert set(asked) == {"ReadVariableOp", "AssignAddVariableOp", "AssignVariableOp", "While"}
    assert first == own  # the same nodes and control inputs; the same values, bit for bit
    assert any(i.startswith("^") for _, _, inputs in own[0] for i in inputs)  # ordered by it


def test_asked_to_keep_attr_lookups_it_changes_nothing(resource_lookups, monkeypatch):
    from tensorflow.python.framework import auto_control_deps_utils

    asked, recording = resource_lookups
    monkeypatch.setenv(KEEP_ATTR_LOOKUPS_ENV, "1")
    assert not look_up_resource_inputs_first()
    assert auto_control_deps_utils.get_read_write_resource_inputs is recording
    _ordered_graph_and_values()
    assert "Mul" in asked


@pytest.fixture
def resolutions(monkeypatch):
    """TensorFlow's ``_get_resource_inputs`` (automatic control dependencies) for the test,
    behind a recorder of the op types it resolves."""
    from tensorflow.python.framework import auto_control_deps

    return _behind_a_recorder(
        monkeypatch,
        auto_control_deps,
        "_get_resource_inputs",
        "resolves_only_ops_with_resources",
        lambda op: op.type,
    )


def _dataset_ordered_graph_and_values() -> tuple[list, list]:
    """A function whose write of a variable follows a dataset reduction that reads it through
    its map function: only tf.data's resolver knows the reduction reads it. Its nodes
    (control inputs included) and what it computes."""
    v = tf.Variable(2.0)

    @tf.function
    def f():
        data = tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) * v)
        total = data.reduce(0.0, lambda a, b: a + b)
        v.assign(5.0)
        return total * 2.0

    graph = f.get_concrete_function().graph.as_graph_def()
    nodes = sorted((n.name, n.op, list(n.input)) for n in graph.node)
    return nodes, [f().numpy().tobytes(), v.numpy().tobytes()]


def test_only_ops_with_resources_are_resolved_and_the_order_is_the_same(resolutions, monkeypatch):
    from tensorflow.python.framework import auto_control_deps

    resolved, recording = resolutions
    monkeypatch.delenv(KEEP_RESOURCE_RESOLVERS_ENV, raising=False)
    own = _ordered_graph_and_values(), _dataset_ordered_graph_and_values()
    assert {"Mul", "AddV2", "Relu", "RandomUniform"} <= set(resolved)  # TensorFlow's own: all
    del resolved[:]
    assert resolve_only_ops_with_resources() and resolve_only_ops_with_resources()  # once
    assert auto_control_deps._get_resource_inputs.__wrapped__ is recording
    first = _ordered_graph_and_values(), _dataset_ordered_graph_and_values()
    resource_ops = {"ReadVariableOp", "AssignAddVariableOp", "AssignVariableOp", "While"}
    # (the map's dataset op takes the variable as its function's captured input)
    assert set(resolved) == resource_ops | {"MapDataset", "ReduceDataset"}
    assert first == own  # the same nodes and control inputs; the same values, bit for bit
    # The write waits for the reduction, which only tf.data's resolver ties to the variable.
    (reduce_name,) = [name for name, op, _ in own[1][0] if op == "ReduceDataset"]
    (write_inputs,) = [inputs for _, op, inputs in own[1][0] if op == "AssignVariableOp"]
    assert f"^{reduce_name}" in write_inputs


def test_asked_to_keep_resource_resolvers_it_changes_nothing(resolutions, monkeypatch):
    from tensorflow.python.framework import auto_control_deps

    resolved, recording = resolutions
    monkeypatch.setenv(KEEP_RESOURCE_RESOLVERS_ENV, "1")
    assert not resolve_only_ops_with_resources()
    assert auto_control_deps._get_resource_inputs is recording
    _ordered_graph_and_values()
    assert "Mul" in resolved


@pytest.fixture
def graph_entries(monkeypatch):
    """TensorFlow's ``FuncGraph.as_default`` for the test, behind a recorder of whether the
    graph entered already was the default one."""
    from tensorflow.python.framework import func_graph

    return _behind_a_recorder(
        monkeypatch,
        func_graph.FuncGraph,
        "as_default",
        "enters_default_graph_as_it_is",
        lambda graph: ops.get_default_graph() is graph,
    )


def _scoped_graph_and_values() -> tuple[list, list]:
    """A function that enters other graphs (a nested function, a loop's body) under a device,
    a name scope and a distribution strategy's scope: its nodes (names, devices, inputs) and
    what it computes."""
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def inner(x):
        return tf.nn.relu(x * v - 1.0)

    @tf.function
    def f(x):
        doubled = v * 2.0  # (v captured outside the scopes: its placeholder's name is fixed)
        with tf.device("/cpu:0"), tf.name_scope("outer"):
            y = inner(x) + doubled
            i, z = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * 0.5 + y), (0, x))
        v.assign_add(z)
        return z, i

    x = tf.constant([0.5, -1.0])
    with strategy.scope():  # traced with a strategy on the graphs' stacks
        graph = f.get_concrete_function(x).graph.as_graph_def()
    functions = [graph.node] + [function.node_def for function in graph.library.function]
    nodes = sorted((n.name, n.op, n.device, list(n.input)) for g in functions for n in g)
    return nodes, [t.numpy().tobytes() for t in f(x)] + [v.numpy().tobytes()]


def test_a_default_graph_is_not_entered_again_and_the_graph_is_the_same(graph_entries, monkeypatch):
    from tensorflow.python.framework import func_graph

    entries, recording = graph_entries
    monkeypatch.delenv(KEEP_GRAPH_REENTRY_ENV, raising=False)
    own = _scoped_graph_and_values()
    assert entries.count(True) > 20 and False in entries  # TensorFlow's own: every op enters
    del entries[:]
    assert enter_a_default_graph_as_it_is() and enter_a_default_graph_as_it_is()  # idempotent
    assert func_graph.FuncGraph.as_default.__wrapped__ is recording
    first = _scoped_graph_and_values()
    assert entries and True not in entries  # each other graph entered by TensorFlow's own
    assert first == own  # the same nodes, devices and inputs; the same values, bit for bit
    assert any(device for _, _, device, _ in own[0])  # the device scope was there to keep


def test_asked_to_keep_graph_reentries_it_changes_nothing(graph_entries, monkeypatch):
    from tensorflow.python.framework import func_graph

    entries, recording = graph_entries
    monkeypatch.setenv(KEEP_GRAPH_REENTRY_ENV, "1")
    assert not enter_a_default_graph_as_it_is()
    assert func_graph.FuncGraph.as_default is recording
    _scoped_graph_and_values()
    assert True in entries
