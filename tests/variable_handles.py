"""The suite creates eager variables without a per-variable kernel for their handles.

An eager ``tf.Variable`` starts with a ``VarHandleOp`` whose ``debug_name`` attribute is the
variable's scoped name (``tensorflow/python/ops/resource_variable_ops.py``,
``_variable_handle_from_shape_and_dtype``). TensorFlow's eager runtime caches one kernel per
op and distinct attributes; its ``shared_name`` (fresh for every eager variable) is left out
of that key, its ``debug_name`` is not, so every Keras weight, optimizer slot and metric (each
its own path) builds a new kernel: ~2 ms a variable against ~0.1 ms, ~3% of the suite's
samples on 2 AMD EPYC (Zen 1) cores. ``debug_name`` names the variable in the runtime's own
error messages about the handle; nothing reads it back: a variable's name, its checkpoint
key, its value and every number computed from it are the same without it.

The test processes and the tool server (whose forked runs are the tools the tests start)
call ``share_variable_handle_kernels`` once after importing TensorFlow, as
``tests/op_tracebacks.py``'s ``skip_op_tracebacks``. Graph-mode handles (a SavedModel's,
variables made while tracing) keep their names. ``T2T_TEST_VARIABLE_DEBUG_NAMES=1`` keeps
TensorFlow's own behaviour. If TensorFlow's private function changes shape, this does nothing
and the suite runs as before, only slower.
"""

from __future__ import annotations

import functools
import inspect
import os

KEEP_ENV = "T2T_TEST_VARIABLE_DEBUG_NAMES"


def share_variable_handle_kernels() -> bool:
    """Makes this process's eager variables create their handles without ``debug_name``;
    False when it did not (asked to keep them, or TensorFlow's op takes no ``debug_name``)."""
    if os.environ.get(KEEP_ENV) == "1":
        return False
    from tensorflow.python.eager import context
    from tensorflow.python.ops import gen_resource_variable_ops

    create = gen_resource_variable_ops.var_handle_op
    if getattr(create, "shares_handle_kernels", False):
        return True
    try:
        parameters = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return False
    if "debug_name" not in parameters:
        return False

    @functools.wraps(create)
    def var_handle_op(*args, **kwargs):
        if context.executing_eagerly():
            kwargs["debug_name"] = ""  # the op's own default
        return create(*args, **kwargs)

    var_handle_op.shares_handle_kernels = True
    gen_resource_variable_ops.var_handle_op = var_handle_op
    return True
