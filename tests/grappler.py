"""Grappler off for a plumbing module's in-process runs, and back as it was after the module.

Grappler's graph rewrites keep a graph's meaning (XLA's CPU back end and TensorFlow's kernels
run without fast-math either way) and cost a third of a toy training run's CPU here (its first
run of the train loop: ~1.8 of ~7 core-s for a multistep_adam run). The modules that check
flags, files, messages and resumption, not T2T's numbers, run without them (as
tests/distributed_check.py's processes do); a module that checks T2T-exact numbers keeps them.
A forked tool run gets the same with ``tests/tool_server.py``'s ``GRAPPLER_OFF_ENV`` in its
environment (the clusters of tests/cluster_run.py have it).
Two forked trainer runs without Grappler do not repeat bit for bit (a few ulps in most Adam
slots after 20 toy steps; equal with Grappler, or with TF_NUM_INTRAOP_THREADS=1: a threaded
kernel's summation order in the unrewritten graph): the suite's runs have one
(tests/conftest.py), and a test that compares two such runs bitwise says it needs it
(tests/test_trainer.py's killed-and-resumed runs: ~20% less CPU than with Grappler, AMD EPYC
Zen 4).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def grappler_off() -> Iterator[None]:
    """Behind tests/conftest.py's module fixture ``without_grappler``: a module takes it with
    ``pytestmark = pytest.mark.usefixtures("without_grappler")``."""
    yield from _grappler(on=False)


@contextlib.contextmanager
def grappler(on: bool) -> Iterator[None]:
    """Grappler on or off for the functions traced and run inside, then as it was."""
    yield from _grappler(on)


def _grappler(on: bool) -> Iterator[None]:
    import tensorflow as tf

    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not on})
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
