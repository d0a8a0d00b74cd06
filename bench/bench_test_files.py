#!/usr/bin/env python3
"""CPU seconds of some test files in two checkouts, run alternately: a cut's effect on the
files it touches, measurable where whole-suite runs drift by more than the cut.

    .venv/bin/python -m bench.bench_test_files --tree=../before --tree=. --repeats=2 \\
        tests/test_ensemble.py tests/test_decoder_cli.py --out=bench/results/x.json

Method. Each ``--tree`` (a checkout of this project beside ../shared) runs README's pytest
command (three test processes, work stealing) on the same files, in turn, ``--repeats`` times.
Its CPU is what tests/suite_cpu.py accounts in a full run: each test's CPU in its process and
in the real interpreters it waited for, and each tool run forked from a tool server. The test
processes' start (TensorFlow's import, collection) is in neither.
``busy_core_s`` is the whole machine's busy CPU over each run, from /proc/stat (run it on a
quiet machine): the test processes' start and the tool servers included.
Each tree's own t2t_repro is imported (its root first on PYTHONPATH); problems/ and hparams/
come from the checkout the venv's editable install points to, so compare trees that differ
elsewhere (bench_trainer_start.py shows how to map them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import report
from tests import suite_cpu


def run_files(tree: str, files: list[str]) -> dict:
    """One pytest run of ``files`` in ``tree``: its CPU accounts and its summary line."""
    fd, log = tempfile.mkstemp(prefix="bench_test_files_", suffix=".jsonl")
    os.close(fd)
    env = {**os.environ, "T2T_REPRO_TEST_CPU_LOG": log, "TF_CPP_MIN_LOG_LEVEL": "2"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3"]
    busy_start, ticks = report.busy_and_total_ticks()[0], os.sysconf("SC_CLK_TCK")
    out = subprocess.run(
        [*command, "--dist", "worksteal", *files],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    time.sleep(1.5)  # the tool servers end within 0.5 s of the run (tests/tool_server.py)
    busy = (report.busy_and_total_ticks()[0] - busy_start) / ticks
    try:
        tests, runs = suite_cpu.read_log(log)
    finally:
        os.unlink(log)
    lines = out.stdout.strip().splitlines()
    in_tests = sum(t["cpu_s"] for t in tests)
    in_runs = sum(r["cpu_s"] for r in runs)
    return {
        "exit_code": out.returncode,
        "summary": lines[-1] if lines else out.stderr[-300:],
        "tests_cpu_s": round(in_tests, 2),
        "forked_runs_cpu_s": round(in_runs, 2),
        "cpu_s": round(in_tests + in_runs, 2),
        "busy_core_s": round(busy, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="test files (paths inside each tree)")
    parser.add_argument("--tree", action="append", required=True, help="a checkout")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="", help="JSON report path")
    args = parser.parse_args()
    trees = [os.path.realpath(tree) for tree in args.tree]
    runs: dict[str, list[dict]] = {tree: [] for tree in trees}
    for _ in range(args.repeats):
        for tree in trees:
            runs[tree].append(run_files(tree, args.files))
    report.emit(
        {
            "cpu": report.cpu_model(),
            "cpu_kind": suite_cpu.cpu_kind(),
            "files": args.files,
            "python_loop_s": round(suite_cpu.python_loop_seconds(), 3),
            "trees": {
                tree: {
                    "commit": subprocess.run(
                        ["git", "rev-parse", "--short", "HEAD"],
                        cwd=tree,
                        capture_output=True,
                        text=True,
                    ).stdout.strip(),
                    "median_cpu_s": statistics.median(r["cpu_s"] for r in runs[tree]),
                    "median_busy_core_s": statistics.median(r["busy_core_s"] for r in runs[tree]),
                    "runs": runs[tree],
                }
                for tree in trees
            },
        },
        args.out,
    )


if __name__ == "__main__":
    main()
