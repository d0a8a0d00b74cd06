"""Runs ``t2t-trainer`` as a two-process cluster on loopback, as a user does with TF_CONFIG.

Shared by ``tests/test_multiworker.py`` and ``tools/drill_multiworker.py``. ``fmt`` is the
TF_CONFIG format: ``worker`` (``{"worker": [a, b]}``) or ``chief`` (``{"chief": [a],
"worker": [b]}``, the managed-cluster format). Process 0 is the chief in both.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.tool_server import GRAPPLER_OFF_ENV
from tests.tools import PLUMBING_MODEL, PYTHON, ROOT, SMALL_BATCH_SHUFFLE, tool_cmd

TINY = f"{PLUMBING_MODEL},batch_size=512,{SMALL_BATCH_SHUFFLE}"


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def tf_configs(fmt: str, n: int = 2) -> list[str]:
    """One TF_CONFIG per process; process 0 is the chief (worker 0 without a chief)."""
    hosts = [f"localhost:{p}" for p in free_ports(n)]
    if fmt == "worker":
        cluster = {"worker": hosts}
        tasks = [{"type": "worker", "index": i} for i in range(n)]
    else:
        cluster = {"chief": hosts[:1], "worker": hosts[1:]}
        tasks = [{"type": "chief", "index": 0}] + [
            {"type": "worker", "index": i} for i in range(n - 1)
        ]
    return [json.dumps({"cluster": cluster, "task": task}) for task in tasks]


def trainer_args(data_dir, output_dir, *extra) -> list[str]:
    return tool_cmd(
        "t2t-trainer",
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--hparams={TINY}",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        *extra,
    )


def start(
    fmt: str, data_dir, output_dir, *extra, tmp_dir=None, per_worker=None, per_worker_env=None
) -> list[subprocess.Popen]:
    """The cluster's processes, started; stdout and stderr are pipes (text).

    ``tmp_dir``: their TMPDIR (where a non-chief's private save goes), to check it is left
    empty. ``per_worker``: further flags for each process (a later flag wins);
    ``per_worker_env``: further environment variables for each process."""
    # The clusters check plumbing (flags, collectives, messages, files), not T2T's numbers:
    # their workers run without Grappler (~17% of a toy run's CPU; tests/grappler.py).
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
    env[GRAPPLER_OFF_ENV] = "1"
    if tmp_dir is not None:
        env["TMPDIR"] = str(tmp_dir)
    configs = tf_configs(fmt)
    per_worker = per_worker or [[] for _ in configs]
    per_worker_env = per_worker_env or [{} for _ in configs]
    # Every worker starts alike, forked from one tool server (tests/tool_client.py), which
    # this cheap run readies. The first run in an environment would be a real interpreter
    # that imports lazily what a forked child has preloaded (seconds of CPU: on a slow, busy
    # machine its peer waited for it past a drill's collective timeout), and a server
    # started for its peer alone costs another import of TensorFlow.
    subprocess.run(
        [*PYTHON, "-c", "pass"], cwd=ROOT, env=dict(env, **per_worker_env[0]), check=True
    )
    return [
        subprocess.Popen(
            trainer_args(data_dir, output_dir, *extra, *own),
            cwd=ROOT,
            env=dict(env, **own_env, TF_CONFIG=config),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for config, own, own_env in zip(configs, per_worker, per_worker_env, strict=True)
    ]


# absl's mutex event log, which TensorFlow's bundled absl writes straight to fd 2 at random
# moments of a multi-worker run (seen twice in ~30 suite runs, before and after a worker's
# one error line), e.g. "[mutex.cc : 452] RAW: Lock blocking 0x55.. @ 0x7f.. 0x7f..": not the
# program's output. t2t-trainer drops what comes after its last line (console.silence_teardown);
# what comes before it cannot stop, so the tests read stderr without these lines.
ABSL_MUTEX_LOG = re.compile(
    r"^\[mutex\.cc : \d+\] RAW: (Lock blocking|Lock returning|Unlock)\b.*\n?", re.M
)


def finish(procs: list[subprocess.Popen], timeout: float = 600) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr without absl's mutex log) of each process; kills them all
    if one hangs."""
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            results.append((p.returncode, out, ABSL_MUTEX_LOG.sub("", err)))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return results


def run(fmt: str, data_dir, output_dir, *extra, timeout=600.0, **kwargs):
    """``start`` (kwargs: its options), then ``finish``."""
    return finish(start(fmt, data_dir, output_dir, *extra, **kwargs), timeout)


Results = list[tuple[int, str, str]]


def shared_run(name: str, launch: Callable[[Path], Results]) -> tuple[Path, Results]:
    """``launch(output_dir)`` (a ``run``) once for the whole test run, whichever test process
    asks first (``tests/shared_build.py``): its output_dir, for reading only (copy it to
    resume it), and the results the launch returned, whatever they were (the callers check
    them), for every test that reads its checkpoints: a cluster's launch costs each worker
    seconds of CPU (its step's trace)."""
    from tests.shared_build import build_once

    def build(path: Path) -> None:
        results = launch(path / "train")
        (path / "results.json").write_text(json.dumps(results), encoding="utf-8")

    path = build_once(name, build)
    results = json.loads((path / "results.json").read_text(encoding="utf-8"))
    return path / "train", [tuple(r) for r in results]
