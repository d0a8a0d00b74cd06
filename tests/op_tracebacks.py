"""The suite builds its graphs without each op's Python creation stack.

TensorFlow records, for every op it adds to a graph, the Python stack that made it
(``tensorflow/python/framework/ops.py``, ``_create_c_op``: ``tf_stack.extract_stack`` then
``TF_SetOpStackTrace``). It is read only to say where a failing op was defined ("Detected at
node ... defined at") and for a SavedModel's optional debug info. The suite traces ~1,000
functions; recording the stacks was ~1/6 of a train step's trace on 2 AMD EPYC (Zen 1) cores.
The ops, their attributes and every number they compute are the same without it.

The test processes and the tool server (whose forked runs are the tools the tests start)
call ``skip_op_tracebacks`` once after importing TensorFlow. ``T2T_TEST_OP_TRACEBACKS=1``
keeps TensorFlow's own behaviour, for debugging a test's graph error. If TensorFlow's private
function changes shape, this does nothing and the suite runs as before, only slower.
"""

from __future__ import annotations

import functools
import inspect
import os

KEEP_ENV = "T2T_TEST_OP_TRACEBACKS"


def skip_op_tracebacks() -> bool:
    """Makes this process build ops without their creation stacks; False when it did not
    (asked to keep them, or TensorFlow's ``_create_c_op`` has no ``extract_traceback``)."""
    if os.environ.get(KEEP_ENV) == "1":
        return False
    from tensorflow.python.framework import ops

    create = ops._create_c_op
    if getattr(create, "skips_op_tracebacks", False):
        return True
    try:
        parameters = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return False
    if "extract_traceback" not in parameters:
        return False

    @functools.wraps(create)
    def create_without_traceback(*args, **kwargs):
        kwargs["extract_traceback"] = False
        return create(*args, **kwargs)

    create_without_traceback.skips_op_tracebacks = True
    ops._create_c_op = create_without_traceback
    return True
