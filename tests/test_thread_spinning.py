"""TensorFlow's thread pools sleep when out of work in the suite's processes
(``tests/tf_overheads.py``'s ``stop_thread_spinning``, set in the tool server before any context
starts): the runs forked from it inherit that, and compute the same values bit for bit."""

import json
import os
import subprocess

from tests.tf_overheads import KEEP_THREAD_SPINNING_ENV, stop_thread_spinning
from tests.tools import PYTHON, ROOT

# A run forked from the tool server (which called skip_tf_overheads before any context
# started), as the suite's tools and test processes are: what its context got, and a
# threaded matmul and reduction's values. argv[1] "spin" puts TensorFlow's default back first.
SPINNING_RUN = """
import json, sys
forked = "tensorflow" in sys.modules  # a real interpreter has not imported it yet
from tensorflow.python.eager import context
ctx = context.context()
inherited = ctx._config is not None and ctx._config.experimental.disable_thread_spinning
if sys.argv[1] == "spin" and ctx._config is not None:
    ctx._config.experimental.disable_thread_spinning = False
import numpy as np, tensorflow as tf
from tests.tf_overheads import stop_thread_spinning
x = tf.constant(np.linspace(-2.0, 3.0, 512 * 512, dtype=np.float32).reshape(512, 512))
y = tf.reduce_sum(tf.nn.softmax(tf.matmul(x, x, transpose_b=True)), axis=0)
print(json.dumps({"forked": forked, "inherited": bool(inherited), "again": stop_thread_spinning(),
                  "runtime": ctx.config.experimental.disable_thread_spinning,
                  "values": y.numpy().tobytes().hex()}))
"""


def _spinning_run(mode: str) -> dict:
    """A forked run's report. The first run in an environment without a server yet (pytest
    without -n: no test process was forked from one) is a real interpreter, and the server
    starts for the next (tests/tool_client.py): that run is made again."""
    for _ in range(2):
        out = subprocess.run(
            [*PYTHON, "-c", SPINNING_RUN, mode],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if result["forked"]:
            return result
    raise AssertionError(f"two runs, neither forked from the tool server: {out.stderr[-3000:]}")


def test_thread_pools_do_not_spin_and_compute_the_same():
    quiet, spinning = _spinning_run("quiet"), _spinning_run("spin")
    # Set in the server, before any run (unless this run's servers were asked to keep it).
    stopped = os.environ.get(KEEP_THREAD_SPINNING_ENV) != "1"
    assert quiet["inherited"] == spinning["inherited"] == stopped
    assert quiet["runtime"] == stopped and not spinning["runtime"]  # what each context got
    assert not quiet["again"] and not spinning["again"]  # started: its pools exist
    assert quiet["values"] == spinning["values"]  # bit for bit


def test_asked_to_keep_thread_spinning_it_changes_nothing(monkeypatch):
    monkeypatch.setenv(KEEP_THREAD_SPINNING_ENV, "1")
    assert not stop_thread_spinning()
