"""The suite's processes skip two things TensorFlow records that no test reads.

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

Neither changes an op, a variable's name, value or checkpoint key, or any number computed.
The test processes (tests/conftest.py), the tool server (whose forked runs are the tools the
tests start; it loads this file by path, so it imports only the standard library at the top)
and tests/fresh_process.py's children call ``record_less`` once after importing TensorFlow. If
a private TensorFlow function changes shape, its wrapper is not installed and the suite runs as
before, only slower.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable

KEEP_OP_TRACEBACKS_ENV = "T2T_TEST_OP_TRACEBACKS"
KEEP_VARIABLE_DEBUG_NAMES_ENV = "T2T_TEST_VARIABLE_DEBUG_NAMES"


def _fix_keyword(
    owner,
    name: str,
    keyword: str,
    value,
    marker: str,
    keep_env: str,
    when: Callable[[], bool] = lambda: True,
) -> bool:
    """Replaces ``owner.name`` by a wrapper that passes ``keyword=value`` whenever ``when()``;
    False when it did not (``keep_env`` is "1", or the function takes no such keyword)."""
    if os.environ.get(keep_env) == "1":
        return False
    create = getattr(owner, name)
    if getattr(create, marker, False):
        return True  # already wrapped: once only
    try:
        parameters = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return False
    if keyword not in parameters:
        return False

    @functools.wraps(create)
    def with_keyword(*args, **kwargs):
        if when():
            kwargs[keyword] = value
        return create(*args, **kwargs)

    setattr(with_keyword, marker, True)
    setattr(owner, name, with_keyword)
    return True


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


def record_less() -> None:
    """Both of the above, as every process that runs the suite's code calls them."""
    skip_op_tracebacks()
    share_variable_handle_kernels()
