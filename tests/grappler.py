"""Grappler off for a plumbing module's in-process runs, and back as it was after the module.

Grappler's graph rewrites keep a graph's meaning (XLA's CPU back end and TensorFlow's kernels
run without fast-math either way) and cost a third of a toy training run's CPU here (its first
run of the train loop: ~1.8 of ~7 core-s for a multistep_adam run). The modules that check
flags, files, messages and resumption, not T2T's numbers, run without them (as
tests/distributed_check.py's processes do); a module that checks T2T-exact numbers keeps them.
A forked tool run gets the same with ``tests/tool_server.py``'s ``GRAPPLER_OFF_ENV`` in its
environment (the clusters of tests/cluster_run.py have it).
"""

from __future__ import annotations

from collections.abc import Iterator


def grappler_off() -> Iterator[None]:
    """Behind tests/conftest.py's module fixture ``without_grappler``: a module takes it with
    ``pytestmark = pytest.mark.usefixtures("without_grappler")``."""
    import tensorflow as tf

    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})


def grappler_off_env() -> dict[str, str]:
    """This process's environment for a forked tool run (``run_tool(..., env=...)``) that
    checks plumbing: the run goes without Grappler (tests/tool_server.py)."""
    import os

    from tests.tool_server import GRAPPLER_OFF_ENV

    return {**os.environ, GRAPPLER_OFF_ENV: "1"}
