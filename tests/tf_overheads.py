"""The suite's processes skip eight things TensorFlow does that no test reads.

1. Each op's Python creation stack. TensorFlow records, for every op it adds to a graph, the
   stack that made it (``tensorflow/python/framework/ops.py``, ``_create_c_op``:
   ``tf_stack.extract_stack`` then ``TF_SetOpStackTrace``), read only to say where a failing
   op was defined ("Detected at node ... defined at") and for a SavedModel's optional debug
   info. It was ~1/6 of a train step's trace on 2 AMD EPYC (Zen 1) cores.
   ``T2T_TEST_OP_TRACEBACKS=1`` keeps it, for debugging a test's graph error.
2. Each eager variable's ``debug_name``. An eager ``tf.Variable`` starts with a
   ``VarHandleOp`` whose ``debug_name`` is the variable's scoped name
   (``tensorflow/python/ops/resource_variable_ops.py``,
   ``_variable_handle_from_shape_and_dtype``). The eager runtime caches one kernel per op and
   distinct attributes; ``shared_name`` (fresh for every eager variable) is left out of that
   key, ``debug_name`` is not, so every Keras weight, optimizer slot and metric built a new
   kernel: ~2 ms a variable against ~0.1 ms, ~3% of the suite's samples on the same cores. It
   names the variable only in the runtime's own errors about the handle. Graph-mode handles (a
   SavedModel's, variables made while tracing) keep it. ``T2T_TEST_VARIABLE_DEBUG_NAMES=1``
   keeps it.
3. Each op's eager error message. For every typed input or attribute of an op it builds,
   TensorFlow joins the names of all the dtypes the op allows into the message it would raise,
   before checking that the dtype is one of them (``tensorflow/python/framework/
   op_def_library.py``, ``_SatisfiesTypeConstraint``): ~30 dtype names an op. Here the check
   comes first and TensorFlow's own function, with its message, runs only when it fails: ~2-3%
   of a tiny trainer run in a process (1.74 against 1.80-1.86 CPU-s, AMD EPYC Zen 4).
   ``T2T_TEST_TYPE_MESSAGES=1`` keeps TensorFlow's own.
4. The thread pools' spinning. A worker of TensorFlow's intra-op and inter-op pools that runs
   out of work spins, stealing from the other queues, before it sleeps
   (``ConfigProto.experimental.disable_thread_spinning``, read as each pool is made:
   ``tensorflow/core/common_runtime/local_device.cc`` and ``process_util.cc``). It buys a
   little latency on idle cores; the suite runs three test processes and their tools on two
   cores, where every spin takes a core from another process. The learning test's run spent
   ~10% of its CPU in the pools' stealing loops; without them it took 18.1 CPU-s against 19.3
   with the same eval numbers (AMD EPYC Zen 4). Set before the process's context starts (the
   tool server's, which its forked runs and test processes inherit); a real interpreter's run
   keeps TensorFlow's default. ``T2T_TEST_THREAD_SPINNING=1`` keeps it.
5. A failed attribute lookup per op. When a ``tf.function`` (or a loop body, a branch, a
   gradient) is traced, its automatic control dependencies ask every op which of its
   resource inputs are only read (``tensorflow/python/framework/auto_control_deps_utils.py``,
   ``get_read_write_resource_inputs``): an attribute that only functional ops carry, so for
   nearly every op the lookup fails, and TensorFlow raises, converts and catches an error
   (~9 of the ~11 µs a call). Here an op with no resource input, whose answer is empty
   whatever the attribute says, is not asked: ~2,000 lookups of a toy model's training trace.
   ``T2T_TEST_ATTR_LOOKUPS=1`` keeps TensorFlow's own.
6. A graph's re-entry per op. Every op a trace builds enters its graph again
   (``tensorflow/python/framework/op_def_library.py``, ``_apply_op_helper``: ``with
   g.as_default()``), though that graph is already the default one. For a ``FuncGraph``, the
   graph of every trace, each entry copies its distribution-strategy, device and
   variable-creator stacks from the default graph, which is itself, and puts them back on exit
   (``tensorflow/python/framework/func_graph.py``, ``_func_graph_as_default_inner_cm``):
   ~5,000 entries in a toy trainer run, ~10% of its traces' CPU (AMD EPYC Zen 4). Here a graph
   that already is the default one (in graph mode) is entered as it is; entering another graph
   is TensorFlow's own. ``T2T_TEST_GRAPH_REENTRY=1`` keeps TensorFlow's own.
7. The resource resolvers per op. After 5., automatic control dependencies still hand every
   op's (empty) resource sets to each registered resolver
   (``tensorflow/python/framework/auto_control_deps.py``, ``_get_resource_inputs``), and the
   three TensorFlow registers only rewrite resources already in those sets, or, for three
   tf.data ops, add the resources their dataset's functions capture. Here an op with no
   resource input and not one of those three gets no resource without asking them (while
   only those three resolvers are registered): ~5% of a toy trainer run's traces' CPU, the
   same graphs (AMD EPYC Zen 4). ``T2T_TEST_RESOURCE_RESOLVERS=1`` keeps TensorFlow's own.
   Such an op then never reaches 5.'s lookup either; 5. still spares the ops tf.data's
   resolver walks, and every op in a run that keeps TensorFlow's resolution.

8. Three of Grappler's passes that change nothing in these graphs. When a function first
   runs, Grappler (``tensorflow/core/grappler/optimizers/meta_optimizer.cc``,
   ``InitializeOptimizers``) runs, in each of its two rounds: the TFG hook, which TensorFlow
   says "won't run any optimizations right now" (an MLIR round trip with shape inference;
   ``disable_tfg_optimizer``), the layout optimizer (converts convolutions' layouts for GPUs;
   on a CPU it converts none; ``layout_optimizer``) and the implementation selector (picks a
   device's body for functions marked ``api_implements``; the project marks none;
   ``implementation_selector``). On a toy training loop they were a third of Grappler's time
   with oneDNN off (~0.28 of ~0.83 CPU-s, Intel Xeon), the graph it made the same but for how
   32 constants encode the same values. Set before the process's context starts, as 4.;
   ``T2T_TEST_GRAPPLER_PASSES=1`` keeps them.

None changes an op, a variable's name, value or checkpoint key, or any number computed.
The test processes (tests/conftest.py), the tool server (whose forked runs are the tools the
tests start; it loads this file by path, so it imports only the standard library at the top)
and tests/fresh_process.py's children call ``skip_tf_overheads`` once after importing
TensorFlow. If a private TensorFlow function changes shape, its wrapper is not installed and
the suite runs as before, only slower.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable

KEEP_OP_TRACEBACKS_ENV = "T2T_TEST_OP_TRACEBACKS"
KEEP_VARIABLE_DEBUG_NAMES_ENV = "T2T_TEST_VARIABLE_DEBUG_NAMES"
KEEP_TYPE_MESSAGES_ENV = "T2T_TEST_TYPE_MESSAGES"
KEEP_THREAD_SPINNING_ENV = "T2T_TEST_THREAD_SPINNING"
KEEP_ATTR_LOOKUPS_ENV = "T2T_TEST_ATTR_LOOKUPS"
KEEP_GRAPH_REENTRY_ENV = "T2T_TEST_GRAPH_REENTRY"
KEEP_RESOURCE_RESOLVERS_ENV = "T2T_TEST_RESOURCE_RESOLVERS"
KEEP_GRAPPLER_PASSES_ENV = "T2T_TEST_GRAPPLER_PASSES"
# TensorFlow's resource resolvers for automatic control dependencies (their registered names,
# tensorflow/python/framework/auto_control_deps.py, tpu/tpu.py, data/ops/dataset_ops.py), and
# the op types the tf.data one gives resources that are not among the op's inputs.
_KNOWN_RESOLVERS = frozenset(
    {"_identity_resolver", "tpu_replicated_input_resolver", "_resource_resolver"}
)
_INDIRECT_RESOURCE_OPS = frozenset({"DatasetToSingleElement", "DatasetToTFRecord", "ReduceDataset"})


def _install(
    owner,
    name: str,
    marker: str,
    keep_env: str,
    fits: Callable[[list[str]], bool],
    wrap: Callable[[Callable], Callable],
) -> bool:
    """Replaces ``owner.name`` by ``wrap(owner.name)``, once; False when it did not
    (``keep_env`` is "1", or TensorFlow's function is gone or its parameters do not ``fit``)."""
    if os.environ.get(keep_env) == "1":
        return False
    original = getattr(owner, name, None)
    if getattr(original, marker, False):
        return True  # already wrapped: once only
    try:
        parameters = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        return False
    if not fits(parameters):
        return False
    wrapped = functools.wraps(original)(wrap(original))
    setattr(wrapped, marker, True)
    setattr(owner, name, wrapped)
    return True


def _fix_keyword(
    owner,
    name: str,
    keyword: str,
    value,
    marker: str,
    keep_env: str,
    when: Callable[[], bool] = lambda: True,
) -> bool:
    """``owner.name`` passes ``keyword=value`` whenever ``when()`` (``_install``)."""

    def wrap(create):
        def with_keyword(*args, **kwargs):
            if when():
                kwargs[keyword] = value
            return create(*args, **kwargs)

        return with_keyword

    return _install(owner, name, marker, keep_env, lambda p: keyword in p, wrap)


def skip_op_tracebacks() -> bool:
    """Makes this process build ops without their creation stacks; False when it did not."""
    from tensorflow.python.framework import ops

    return _fix_keyword(
        ops,
        "_create_c_op",
        "extract_traceback",
        False,
        "skips_op_tracebacks",
        KEEP_OP_TRACEBACKS_ENV,
    )


def share_variable_handle_kernels() -> bool:
    """Makes this process's eager variables create their handles without ``debug_name`` (the
    op's own default, ""); False when it did not."""
    from tensorflow.python.eager import context
    from tensorflow.python.ops import gen_resource_variable_ops

    return _fix_keyword(
        gen_resource_variable_ops,
        "var_handle_op",
        "debug_name",
        "",
        "shares_handle_kernels",
        KEEP_VARIABLE_DEBUG_NAMES_ENV,
        when=context.executing_eagerly,
    )


def check_types_first() -> bool:
    """Makes this process build an op's dtype error message only when a dtype is refused;
    False when it did not (asked to keep TensorFlow's own, or its function changed shape)."""
    from tensorflow.python.framework import op_def_library

    def wrap(check):
        def check_first(dtype, attr_def, param_name):
            if attr_def.HasField("allowed_values") and (
                dtype not in attr_def.allowed_values.list.type
            ):
                check(dtype, attr_def, param_name)  # raises TensorFlow's own TypeError

        return check_first

    return _install(
        op_def_library,
        "_SatisfiesTypeConstraint",
        "checks_first",
        KEEP_TYPE_MESSAGES_ENV,
        lambda p: p == ["dtype", "attr_def", "param_name"],
        wrap,
    )


def _configure_before_start(keep_env: str, change: Callable) -> bool:
    """``change(config)`` on the ``ConfigProto`` this process's context will start with; False
    when it did not (``keep_env`` is "1", or the context already started)."""
    if os.environ.get(keep_env) == "1":
        return False
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    ctx = context.context()
    if getattr(ctx, "_initialized", True) or not hasattr(ctx, "_config"):
        return False
    config = config_pb2.ConfigProto()
    if ctx._config is not None:
        config.CopyFrom(ctx._config)
    change(config)
    ctx._config = config
    return True


def stop_thread_spinning() -> bool:
    """Makes this process's thread pools sleep when out of work; False when it did not (asked
    to keep the spinning, or the context, and so its pools, already started)."""

    def no_spinning(config) -> None:
        config.experimental.disable_thread_spinning = True

    return _configure_before_start(KEEP_THREAD_SPINNING_ENV, no_spinning)


def skip_idle_grappler_passes() -> bool:
    """Makes this process's functions go through Grappler without the three passes of 8.
    above; False when it did not (asked to keep them, or the context already started)."""
    return _configure_before_start(
        KEEP_GRAPPLER_PASSES_ENV,
        lambda config: without_idle_grappler_passes(config.graph_options.rewrite_options),
    )


def without_idle_grappler_passes(rewrite_options) -> None:
    """The three passes of 8. above turned off in a ``RewriterConfig``."""
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrite_options.disable_tfg_optimizer = True
    rewrite_options.layout_optimizer = rewriter_config_pb2.RewriterConfig.OFF
    rewrite_options.implementation_selector = rewriter_config_pb2.RewriterConfig.OFF


def look_up_resource_inputs_first() -> bool:
    """Makes this process ask an op for its read-only resource inputs only when it has a
    resource input; False when it did not (asked to keep TensorFlow's own, or its function
    changed shape)."""
    from tensorflow.python.framework import auto_control_deps_utils, dtypes
    from tensorflow.python.util import object_identity

    def wrap(get_inputs):
        def resource_inputs_first(op):
            if any(t.dtype == dtypes.resource for t in op.inputs):
                return get_inputs(op)
            # What TensorFlow's function returns, in each of its branches, for such an op.
            return object_identity.ObjectIdentitySet(), object_identity.ObjectIdentitySet()

        return resource_inputs_first

    return _install(
        auto_control_deps_utils,
        "get_read_write_resource_inputs",
        "looks_up_resource_inputs_first",
        KEEP_ATTR_LOOKUPS_ENV,
        lambda p: p == ["op"],
        wrap,
    )


class _AsItIs:
    """``with graph.as_default()`` for a graph that already is the default one: nothing to do."""

    __slots__ = ("graph",)

    def __init__(self, graph) -> None:
        self.graph = graph

    def __enter__(self):
        return self.graph

    def __exit__(self, *exc_info) -> None:
        return None


def enter_a_default_graph_as_it_is() -> bool:
    """Makes this process's ``FuncGraph.as_default()`` do nothing when that graph already is
    the default one (graph mode); False when it did not (asked to keep TensorFlow's own, or
    its method changed shape)."""
    from tensorflow.python.eager import context
    from tensorflow.python.framework import func_graph, ops

    def wrap(as_default):
        def as_it_is_when_default(self):
            if ops.get_default_graph() is self and not context.executing_eagerly():
                return _AsItIs(self)
            return as_default(self)

        return as_it_is_when_default

    return _install(
        func_graph.FuncGraph,
        "as_default",
        "enters_default_graph_as_it_is",
        KEEP_GRAPH_REENTRY_ENV,
        lambda p: p == ["self"],
        wrap,
    )


def resolve_only_ops_with_resources() -> bool:
    """Makes this process's automatic control dependencies find no resource for an op without
    a resource input (and not one of tf.data's ops with indirect ones) without running the
    resolvers; False when it did not (asked to keep TensorFlow's own, its function changed
    shape, or a resolver it does not know is registered)."""
    from tensorflow.python.framework import auto_control_deps, dtypes

    registry = getattr(auto_control_deps, "_acd_resource_resolvers_registry", None)
    if registry is None or not set(registry.list()) <= _KNOWN_RESOLVERS:
        return False
    count = len(registry.list())

    def wrap(get_resource_inputs):
        def resolved_only_with_resources(op):
            if (
                len(registry.list()) == count
                and op.type not in _INDIRECT_RESOURCE_OPS
                and not any(t.dtype == dtypes.resource for t in op.inputs)
            ):
                return ()  # what TensorFlow's generator yields for such an op: nothing
            return get_resource_inputs(op)

        return resolved_only_with_resources

    return _install(
        auto_control_deps,
        "_get_resource_inputs",
        "resolves_only_ops_with_resources",
        KEEP_RESOURCE_RESOLVERS_ENV,
        lambda p: p == ["op"],
        wrap,
    )


def skip_tf_overheads() -> None:
    """All of the above, as every process that runs the suite's code calls them."""
    skip_op_tracebacks()
    share_variable_handle_kernels()
    check_types_first()
    stop_thread_spinning()
    skip_idle_grappler_passes()
    look_up_resource_inputs_first()
    enter_a_default_graph_as_it_is()
    resolve_only_ops_with_resources()
