"""Runs a test's body in a new Python process, for the few tests whose memory TensorFlow never
gives back: XLA keeps every compiled function for the life of the process (~70 MB per beam
search here), so a test that compiles dozens would leave a test worker gigabytes larger. The
body runs unchanged in the child (started as the tools are, ``tests/tools.py``'s ``PYTHON``);
its failure fails the test with the child's traceback.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Callable

from tests.tools import PYTHON, ROOT


def run_job(path: str) -> None:
    """In the child: the pickled ``(fn, args)`` at ``path``, with the built-ins registered and
    TensorFlow set up as tests/conftest.py does in a test process."""
    from t2t_repro.commands.builtins import register_builtins
    from tests.tf_overheads import skip_tf_overheads
    from tests.trace_accounts import install_from_env

    register_builtins()
    skip_tf_overheads()
    install_from_env()
    with open(path, "rb") as f:
        fn, args = pickle.load(f)
    fn(*args)


def run_in_fresh_process(
    fn: Callable, *args, timeout: float = 900, env: dict[str, str] | None = None
) -> None:
    """``fn(*args)`` in a new process (``fn`` a module-level function, ``args`` picklable),
    with ``env`` added to its environment; an exception there fails the caller with the
    child's traceback."""
    code = "import sys\nfrom tests.fresh_process import run_job\nrun_job(sys.argv[1])\n"
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job.pkl")
        with open(job, "wb") as f:
            pickle.dump((fn, args), f)
        child = subprocess.run(
            [*PYTHON, "-c", code, job],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    sys.stdout.write(child.stdout)
    if child.returncode != 0:
        raise AssertionError(
            f"in a fresh process (exit {child.returncode}):\n{child.stderr[-6000:]}"
        )
