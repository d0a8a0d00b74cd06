"""Runs a test's body in a new Python process, for the few tests whose memory TensorFlow never
gives back: XLA keeps every compiled function for the life of the process (~70 MB per beam
search here), so a test that compiles dozens would leave a test worker gigabytes larger. The
body runs unchanged in the child; its failure is raised in the test with the child's traceback.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
import traceback
from collections.abc import Callable


def _child(fn: Callable, args: tuple, results) -> None:
    try:
        from t2t_repro.commands.builtins import register_builtins

        register_builtins()  # as tests/conftest.py does in the test process
        fn(*args)
        results.put(None)
    except BaseException:  # noqa: BLE001 - every failure goes back to the test
        results.put(traceback.format_exc())


def run_in_fresh_process(fn: Callable, *args, timeout: float = 900) -> None:
    """``fn(*args)`` in a spawned interpreter (``fn`` a module-level function, ``args``
    picklable); an exception there fails the caller with the child's traceback."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    child = ctx.Process(target=_child, args=(fn, args, results))
    child.start()
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                failure = results.get(timeout=1)
                break
            except queue.Empty:
                assert child.is_alive(), f"the fresh process died (exit {child.exitcode})"
                assert time.monotonic() < deadline, f"the fresh process ran over {timeout} s"
    finally:
        child.join(timeout=60)
        if child.is_alive():
            child.kill()
    if failure is not None:
        raise AssertionError(f"in a fresh process:\n{failure}")
    assert child.exitcode == 0, f"the fresh process exited with {child.exitcode}"
