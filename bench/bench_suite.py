"""The test suite's cost as CI pays it: README's ``make test`` (or ``make test-durations``) with
its wall time, the whole machine's busy CPU (from /proc/stat: the tool servers and their forked
runs are not the test processes' children, so ``time`` misses them), the largest resident
process seen, a second-by-second record of busy cores (where the cores sat idle), and the CPU
seconds of each test file and of the 40 costliest tests, tool runs included (``cpu_accounts``,
``tests/suite_cpu.py``; ``python -m tools.suite_budget`` checks them against the budget).

    python -m bench.bench_suite --out bench/results/suite_cpu.json
    python -m bench.bench_suite --target test-durations --env TF_ENABLE_ONEDNN_OPTS=1
    python -m bench.bench_suite --traces --out /tmp/suite_traces.json

``--traces`` adds ``trace_accounts``: the suite's traces of ``tf.function``s and the first
calls of what they traced, in all, per function and per test, with their CPU seconds
(``tests/trace_accounts.py``). Its wrappers cost a little CPU: compare timings without it.

The CPU's model and a calibration taken at start and end (a 1-core Python loop, a float32
matmul's GFLOP/s on one thread) name the machine beside the figures: run nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time

from bench import report
from tests import suite_cpu, trace_accounts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _largest_rss_kib() -> tuple[int, str]:
    """The largest VmRSS of any process now, with its command line."""
    best, name = 0, ""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                match = re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M)
            if match and int(match.group(1)) > best:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:160]
                best, name = int(match.group(1)), cmd
        except OSError:
            continue
    return best, name


def _calibrate() -> dict:
    """A 1-core Python loop (s) and a 512x512 float32 matmul on one BLAS thread (GFLOP/s)."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    loop = time.perf_counter() - start
    code = (
        "import time, numpy as np\n"
        "a = np.random.rand(512, 512).astype(np.float32)\n"
        "a @ a\n"
        "t = time.perf_counter(); n = 0\n"
        "while time.perf_counter() - t < 1.0:\n"
        "    a @ a; n += 1\n"
        "print(2 * 512**3 * n / (time.perf_counter() - t) / 1e9)\n"
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    gflops = float(out.stdout.strip()) if out.returncode == 0 else None
    return {"python_loop_s": round(loop, 3), "matmul_f32_gflops_1thread": gflops}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="test", help="the Makefile target to run")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the run")
    parser.add_argument("--out", default="", help="JSON report path")
    parser.add_argument("--traces", action="store_true", help="also account traces and first calls")
    args = parser.parse_args()
    env = dict(os.environ, CI="true")
    env.update(item.split("=", 1) for item in args.env)
    import tempfile

    cpu_log = tempfile.NamedTemporaryFile(prefix="suite_cpu_", suffix=".jsonl", delete=False).name
    env["T2T_REPRO_TEST_CPU_LOG"] = cpu_log
    trace_log = ""
    if args.traces:
        trace_log = tempfile.NamedTemporaryFile(
            prefix="suite_traces_", suffix=".jsonl", delete=False
        ).name
        env[trace_accounts.TRACE_LOG_ENV] = trace_log
    calibration_start = _calibrate()
    timeline: list[float] = []
    peak = [0, ""]
    done = threading.Event()

    def sample() -> None:
        last = report.busy_and_total_ticks()
        while not done.wait(1.0):
            now = report.busy_and_total_ticks()
            timeline.append(
                round((now[0] - last[0]) / max(now[1] - last[1], 1) * os.cpu_count(), 2)
            )
            last = now
            rss = _largest_rss_kib()
            if rss[0] > peak[0]:
                peak[:] = rss

    busy_start = report.busy_and_total_ticks()
    ticks = os.sysconf("SC_CLK_TCK")
    start = time.time()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = subprocess.run(["make", args.target], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.time() - start
    done.set()
    sampler.join()
    busy = (report.busy_and_total_ticks()[0] - busy_start[0]) / ticks
    summary = re.findall(r"^=*\s*(\d+ (?:passed|failed).*?) in [\d.]+s", out.stdout, re.M)
    durations = re.findall(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)", out.stdout, re.M)
    idle_seconds = sum(1 for cores in timeline if cores < os.cpu_count() - 0.5)
    report.emit(
        {
            "cpu": report.cpu_model(),
            "cpu_kind": suite_cpu.cpu_kind(),  # the budget's total is per kind
            "cores": os.cpu_count(),
            "command": f"make {args.target}",
            "env": args.env,
            "exit_code": out.returncode,
            "summary": summary[-1] if summary else out.stdout[-500:],
            "wall_s": round(wall, 1),
            "busy_core_s": round(busy, 1),
            "mean_busy_cores": round(busy / wall, 2),
            "seconds_with_a_core_idle": idle_seconds,
            "largest_process_gib": round(peak[0] / 2**20, 2),
            "largest_process": peak[1],
            "slowest": [
                {"s": float(s), "phase": phase, "test": test} for s, phase, test in durations
            ],
            "cpu_accounts": suite_cpu.cpu_accounts(cpu_log),
            **({"trace_accounts": trace_accounts.summarize(trace_log)} if trace_log else {}),
            "busy_cores_per_second": timeline,
            "calibration_start": calibration_start,
            "calibration_end": _calibrate(),
            "failures": re.findall(r"^FAILED .*$", out.stdout, re.M),
        },
        args.out,
    )
    sys.exit(out.returncode)


if __name__ == "__main__":
    main()
