"""The multi-worker drills' shared pieces: the machine-scaled collective timeout, the chief-
slowed two-worker launch (run once per test run: tests/test_multiworker.py checks its early
stop and drills on it, tests/test_reshard.py resumes its checkpoints) and the slow-read library
for slow restores."""

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
    """The drills' --collective_timeout_secs ``T`` on this machine, now: 15 times the wall
    seconds of the suite's calibration loop (``tests/suite_cpu.py``; 0.5 s on a quiet AMD
    EPYC Zen 4, 2.3 s on it beside 12 busy processes), 4 s at least. A healthy worker
    reaches a collective later than its peer by the unequal share of the cores each got in
    an unsynchronised stretch: the first loop call traces the step on each worker apart
    (~20 loops' worth), and a fixed 5 s failed on that machine. 15, not 10: the host may
    slow down after this measurement (by 2x within minutes on the Intel Xeon of sessions
    45-51), and a quiet host's ``T`` stays the 4 s floor. Every drill's length is a multiple
    of ``T`` (a stuck stage is ended after ``T`` idle, whatever ``T`` is), idle time."""
    start = time.monotonic()
    total = 0
    for i in range(CALIBRATION_LOOP):
        total += i
    return max(4.0, math.ceil(15 * (time.monotonic() - start)))


# The shared launch's hparams, which every run resuming its checkpoints passes too: the toy
# model at a learning rate of ~6e-14 an update (warm-up step 1), below the float32 spacing of
# every weight farther than ~1e-6 from 0, so its updates move only the zero-initialised
# biases (by about that much) and its dev decodes, and their BLEU, stay the same from one
# evaluation to the next: early stopping on BLEU stops the run at a known step, as at learning
# rate 0, while the learning rate a resume restores still depends on the restored step.
LAUNCH_HPARAMS = f"{cluster_run.TINY},learning_rate_constant=1e-9"


def slow_chief_launch(data) -> tuple[Path, cluster_run.Results]:
    """Launch 1 of test_multiworker.py's drill test: two workers train and evaluate after each
    step, with a --collective_timeout_secs ``T`` (``drill_timeout``) and the chief's dev
    decodes and its save of ckpt-2 made ``T`` + 1 s longer each (T2T_DRILL_STAGE, progressing
    as a decode does). Early stopping on the chief's dev BLEU, which the other worker does not
    compute, stops both at step 2 of 3 (``LAUNCH_HPARAMS``; test_multiworker.py's
    test_two_workers_train_and_evaluate_one_model).
    Run once for the whole test run (``cluster_run.shared_run``): tests/test_reshard.py
    resumes its two-worker checkpoints too. Its output_dir (copy it to change it; the workers'
    TMPDIR is ``tmp`` beside it), results."""

    def launch(out) -> cluster_run.Results:
        timeout = drill_timeout()
        longer = f"{timeout + 1:g}"
        slow = {"T2T_DRILL_STAGE": f"dev decodes={longer},checkpoint save of step 2={longer}"}
        tmp = out.parent / "tmp"  # where a non-chief's private save goes: left empty
        tmp.mkdir()
        return cluster_run.run(
            "worker",
            data,
            out,
            f"--collective_timeout_secs={timeout:g}",
            "--random_seed=1",
            "--eval_steps=1",
            "--schedule=train_and_evaluate",
            "--train_steps=3",  # stopped early at 2
            "--local_eval_frequency=1",
            "--eval_decode_examples=2",
            "--no-attention_images",
            f"--hparams={LAUNCH_HPARAMS}",
            "--eval_early_stopping_steps=1",
            "--eval_early_stopping_metric=bleu",
            "--noeval_early_stopping_metric_minimize",
            per_worker_env=[slow, {}],
            tmp_dir=tmp,
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
