"""Runs several tool commands at once, each on its own share of the CPU cores.

Two trainers on one core each get more updates in total than one trainer on both cores (on
the 2-core AMD EPYC, one bf16 parsing trainer does ~1.5x the tokens/s of one on one core, not
2x), and on the small parsing sample one model stops improving long before the hour is up
(``docs/parsing.md``), so the parsing recipe trains its ensemble members side by side.
Each command's output goes to its own log file; a progress line per command is printed while
they run. The first failure is reported with the tail of its log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from t2t_repro.workflow import WorkflowError, tool_module


def core_groups(n: int) -> list[set[int]]:
    """This process's usable cores split into ``n`` disjoint groups of (nearly) equal size;
    with fewer cores than ``n``, every command may use every core (the OS shares them)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < n:
        return [set(cores) for _ in range(n)]
    return [set(cores[k::n]) for k in range(n)]


def last_line_with(path: str, word: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.startswith(word)]
    except FileNotFoundError:
        return ""
    return lines[-1] if lines else ""


def run_side_by_side(tool: str, arg_lists: list[list[str]], logs: list[str], poll_s=60) -> None:
    """Runs ``tool`` once per argument list, concurrently, on disjoint core groups."""
    groups = core_groups(len(arg_lists))
    shared = len(groups) > 1 and groups[0] == groups[1]  # more commands than cores
    procs = []
    for args, log, cores in zip(arg_lists, logs, groups, strict=True):
        print(f"\n$ {tool} {' '.join(args)}  (cores {sorted(cores)}, log {log})", flush=True)
        out = open(log, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
        # TensorFlow sizes its thread pools by the cores it may use; with shared cores, one
        # thread each (two trainers on one core would otherwise fight with two threads each).
        threads = "1" if shared else str(len(cores))
        env = {**os.environ, "TF_NUM_INTRAOP_THREADS": threads, "TF_NUM_INTEROP_THREADS": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", tool_module(tool), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            preexec_fn=lambda cores=cores: os.sched_setaffinity(0, cores),
        )
        procs.append((proc, out, log))
    try:
        while any(proc.poll() is None for proc, _, _ in procs):
            time.sleep(poll_s)
            for k, (_, _, log) in enumerate(procs):
                print(f"[{k + 1}/{len(procs)}] {last_line_with(log, 'step ')}", flush=True)
    except KeyboardInterrupt:
        for proc, _, _ in procs:
            proc.terminate()  # the trainers save a checkpoint on SIGTERM
        raise
    finally:
        for proc, out, _ in procs:
            proc.wait()
            out.close()
    for proc, _, log in procs:
        if proc.returncode != 0:
            with open(log, encoding="utf-8", errors="replace") as f:
                tail = "".join(f.readlines()[-15:])
            raise WorkflowError(f"{tool} failed with exit code {proc.returncode} ({log}):\n{tail}")
