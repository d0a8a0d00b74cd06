"""The multi-worker drills' shared pieces: the machine-scaled collective timeout, the chief-
slowed two-worker launch (run once per test run: tests/test_multiworker.py drills on it and
tests/test_reshard.py resumes its checkpoints) and the slow-read library for slow restores."""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests import cluster_run
from tests.suite_cpu import CALIBRATION_LOOP


def drill_timeout() -> float:
    """The drills' --collective_timeout_secs ``T`` on this machine, now: 10 times the wall
    seconds of the suite's calibration loop (``tests/suite_cpu.py``; 0.5 s on a quiet AMD
    EPYC Zen 4, 2.3 s on it beside 12 busy processes), 4 s at least. A healthy worker
    reaches a collective later than its peer by the unequal share of the cores each got in
    an unsynchronised stretch: the first loop call traces the step on each worker apart
    (~20 loops' worth), and a fixed 5 s failed on that machine. Every drill's length is a
    multiple of ``T`` (a stuck stage is ended after ``T`` idle, whatever ``T`` is)."""
    start = time.monotonic()
    total = 0
    for i in range(CALIBRATION_LOOP):
        total += i
    return max(4.0, math.ceil(10 * (time.monotonic() - start)))


def slow_chief_launch(data) -> tuple[Path, cluster_run.Results]:
    """Launch 1 of test_multiworker.py's drill test: two workers train 2 steps and evaluate
    after each, with a --collective_timeout_secs ``T`` (``drill_timeout``) and the chief's dev
    decodes and its save of ckpt-2 made ``T`` + 1 s longer each (T2T_DRILL_STAGE, progressing
    as a decode does).
    Run once for the whole test run (``cluster_run.shared_run``): tests/test_reshard.py
    resumes its two-worker checkpoints too. Its output_dir (copy it to change it), results."""

    def launch(out) -> cluster_run.Results:
        timeout = drill_timeout()
        longer = f"{timeout + 1:g}"
        slow = {"T2T_DRILL_STAGE": f"dev decodes={longer},checkpoint save of step 2={longer}"}
        return cluster_run.run(
            "worker",
            data,
            out,
            f"--collective_timeout_secs={timeout:g}",
            "--random_seed=1",
            "--eval_steps=1",
            "--schedule=train_and_evaluate",
            "--train_steps=2",
            "--local_eval_frequency=1",
            "--eval_decode_examples=2",
            "--no-attention_images",
            per_worker_env=[slow, {}],
            timeout=300 + 10 * timeout,  # the launch waits some multiples of it
        )

    return cluster_run.shared_run("slow_chief_launch", launch)


SLOW_PREAD = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
/* The first $SLOW_PREAD_MAX reads of files whose path holds $SLOW_PREAD_MATCH: 1 KiB at a
   time, each after a pause of $SLOW_PREAD_USECS (a slow network file system); each slowed
   read appends a byte to $SLOW_PREAD_LOG. */
static long slowed = 0;
static ssize_t slow(int fd, void *buf, size_t n, off_t offset, const char *name) {
    ssize_t (*real)(int, void *, size_t, off_t) = dlsym(RTLD_NEXT, name);
    const char *match = getenv("SLOW_PREAD_MATCH");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (match && len > 0 && slowed < atol(getenv("SLOW_PREAD_MAX"))) {
        path[len] = 0;
        if (strstr(path, match)) {
            slowed++;
            FILE *log = fopen(getenv("SLOW_PREAD_LOG"), "a");
            if (log) { fputc('.', log); fclose(log); }
            usleep(atoi(getenv("SLOW_PREAD_USECS")));
            if (n > 1024) n = 1024;
        }
    }
    return real(fd, buf, n, offset);
}
ssize_t pread(int fd, void *buf, size_t n, off_t o) { return slow(fd, buf, n, o, "pread"); }
ssize_t pread64(int fd, void *buf, size_t n, off_t o) { return slow(fd, buf, n, o, "pread64"); }
"""


def slow_reads(tmp_path) -> str:
    """The SLOW_PREAD library, built with the C compiler (skips without one)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the slow-read library")
    source, library = tmp_path / "slow_pread.c", tmp_path / "slow_pread.so"
    source.write_text(SLOW_PREAD)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", library, source, "-ldl"], check=True)
    return str(library)
