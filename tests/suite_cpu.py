"""The suite's CPU seconds per test file, and the budget that names a file grown past its share.

The accounts: ``tests/conftest.py`` logs each test's CPU (its process's and its waited-for
children's: real interpreters) with its pid and time span, and ``tests/tool_client.py`` the
CPU of each forked tool run, given here to the test that was running in the client's parent
when the run ended. ``bench/bench_suite.py`` reports them; ``make test`` prints the budget
check at its end (it never fails the run); ``python -m tools.suite_budget`` checks a
bench_suite report and exits 1 when the suite is over budget and a file is named.

The budget (``tests/suite_budget.json``): the whole suite's accounted core-seconds on a
reference machine (its Python-loop calibration beside it, to scale to this machine's speed),
and each file's share of them. Shares, not seconds, name a file: a slow or busy machine
makes every file slower alike, so a file's share moves only when the file itself changed.
A file is named only past its share by a margin (``GROWTH`` and ``FLOOR``): a file's own CPU
moves by ~10-20% between runs (module fixtures built once per test process that takes the
module's tests, and the shared machine), and shares differ by CPU kind (with AVX-512 and
oneDNN the compute-bound files took up to ~1.4x their share of the slowest machine, 1-2
points of the suite), and neither must name anything. The Python-loop scaling of the total
holds on one CPU kind only (it made this suite twice as dear on AMD EPYC with AVX-512 as
on the slowest one): write the budget on the kind it is checked on. And on one interpreter
build: a PGO build runs the loop ~1.4x faster but the suite only ~1.1x, so the reference
loops are those of the interpreter ``make`` picks (tools/fastest_python.sh).
"""

from __future__ import annotations

import collections
import json
import time
from pathlib import Path

BUDGET = Path(__file__).with_name("suite_budget.json")
# A file is named when its share exceeds its budgeted share by both: GROWTH of that share,
# and FLOOR of the whole suite (so that a small file's jitter names nothing).
GROWTH = 0.5
FLOOR = 0.015
CALIBRATION_LOOP = 10_000_000  # additions; bench_suite's python_loop_s is this loop's seconds


def python_loop_seconds() -> float:
    """The CPU seconds of bench_suite's calibration loop in this process (process time: a
    busy machine's other processes change it less than they change wall time)."""
    start = time.process_time()
    total = 0
    for i in range(CALIBRATION_LOOP):
        total += i
    return time.process_time() - start


def read_log(path: str) -> tuple[list[dict], list[dict]]:
    """The log's test lines and forked-run lines (a line cut short by a killed process is
    skipped)."""
    tests, runs = [], []
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            (tests if "test" in record else runs).append(record)
    return tests, runs


def run_owner(run: dict, tests: list[dict]) -> str | None:
    """The test running in the forked run's client's parent when the run ended, if any."""
    for t in tests:
        if t["pid"] == run["client_of"] and t["start"] <= run["end"] <= t["end"] + 1:
            return t["test"]
    return None


def cpu_accounts(path: str, top: int = 40) -> dict:
    """Per test and per test file: the CPU seconds logged at ``path``, each forked tool run's
    given to the test that was running in the client's parent at the run's end."""
    tests, runs = read_log(path)
    cpu = collections.Counter()
    for t in tests:
        cpu[t["test"]] += t["cpu_s"]
    unassigned = 0.0
    for run in runs:
        owner = run_owner(run, tests)
        if owner:
            cpu[owner] += run["cpu_s"]
        else:
            unassigned += run["cpu_s"]
    by_file = collections.Counter()
    for test, seconds in cpu.items():
        by_file[test.split("::")[0]] += seconds
    return {
        "accounted_core_s": round(sum(cpu.values()) + unassigned, 1),
        "forked_runs": len(runs),
        "unassigned_run_core_s": round(unassigned, 1),
        "by_file": {name: round(s, 1) for name, s in by_file.most_common()},
        "top_tests": {name: round(s, 1) for name, s in cpu.most_common(top)},
        "memory_peaks_gib": memory_peaks(tests, runs),
    }


def memory_peaks(tests: list[dict], runs: list[dict], top: int = 10) -> dict:
    """Where the suite's largest processes are made: each test process's peak resident GiB,
    named by the test during which it was reached, and the largest forked tool runs', named
    by the test that ran them (logs without sizes give nothing)."""
    reached: dict[int, tuple[float, str]] = {}
    for t in sorted(tests, key=lambda t: t["end"]):
        size = t.get("maxrss_kib", 0) / 2**20
        if size > reached.get(t["pid"], (0.0, ""))[0]:
            reached[t["pid"]] = size, t["test"]
    peaks = collections.Counter(
        {f"test process {pid}, reached in {test}": size for pid, (size, test) in reached.items()}
    )
    for run in runs:
        name = f"tool run of {run_owner(run, tests) or 'no test'}"
        peaks[name] = max(peaks[name], run.get("maxrss_kib", 0) / 2**20)
    return {name: round(size, 2) for name, size in peaks.most_common(top) if size}


def load_budget(path: Path = BUDGET) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def grown_files(by_file: dict, budget: dict) -> list[tuple[str, float, float, float]]:
    """``(file, core-s, share, budgeted share)`` of each file past its share by the margins,
    costliest first. A file the budget lacks (a new file) has a share of 0."""
    total = sum(by_file.values())
    if total <= 0:
        return []
    shares = budget["files"]
    grown = []
    for name, seconds in by_file.items():
        share, allowed = seconds / total, shares.get(name, 0.0)
        if share > allowed * (1 + GROWTH) and share - allowed > FLOOR:
            grown.append((name, seconds, share, allowed))
    return sorted(grown, key=lambda g: -g[1])


# AMD's family 23 below model 0x30 (Zen 1 and Zen+) runs AVX2 on 128-bit units: its float32
# matmul was 26-32 GFLOP/s on one thread against 68-92 on a Zen 3 host with the same flags,
# and its suite cost 2.3-3.2x a Zen 4 host's by file where the Python loop said ~2x. A kind of
# its own, so that its budget total holds it to 8 minutes (scaled by the loop from the Zen 3
# host's total it passed runs of ~9:20).
ZEN1_FAMILY, ZEN2_FIRST_MODEL = 23, 0x30


def cpu_kind(cpuinfo: str | None = None) -> str:
    """The CPU kind a budget total holds for: the maker's line and its widest vector unit
    (``/proc/cpuinfo``'s model name and flags), e.g. "AMD EPYC, avx512_bf16"; an AMD EPYC
    of the Zen 1 generation is "AMD EPYC, no AVX-512, Zen 1" (``ZEN1_FAMILY``)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
        except OSError:
            return "unknown CPU"
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in cpuinfo.splitlines())
        if key.strip() in ("model name", "flags", "cpu family", "model")
    )
    model, flags = fields.get("model name", "unknown CPU"), set(fields.get("flags", "").split())
    plain = model.replace("(R)", "").replace("(TM)", "")
    line = next((name for name in ("AMD EPYC", "Intel Xeon") if name in plain), model)
    for flag, unit in (("amx_tile", "AMX"), ("avx512_bf16", "avx512_bf16"), ("avx512f", "AVX-512")):
        if flag in flags:
            return f"{line}, {unit}"
    number = fields.get("model", "")
    zen1 = fields.get("cpu family") == str(ZEN1_FAMILY) and number.isdigit()
    if line == "AMD EPYC" and zen1 and int(number) < ZEN2_FIRST_MODEL:
        return f"{line}, no AVX-512, Zen 1"
    return f"{line}, no AVX-512"


def scaled_total(total: float, loop_s: float | None, reference: dict) -> float:
    """``total`` in the reference run's core-seconds (as is without a calibration): the
    same CPU kind, scaled by the Python loop for the machine's phase (a busy or slow host)."""
    if not loop_s:
        return total
    return total * reference["reference_python_loop_s"] / loop_s


def report(by_file: dict, budget: dict, loop_s: float | None, kind: str) -> tuple[bool, list[str]]:
    """(over budget with a file named, the report's lines). The total is checked against the
    budget's for ``kind`` (``cpu_kind``); a kind without one gets the shares alone."""
    total = sum(by_file.values())
    reference = budget.get("totals", {}).get(kind)
    head = f"suite CPU: {total:,.0f} core-s in {len(by_file)} test files"
    over = False
    if reference is None:
        lines = [
            f"{head}; no budget total for this CPU kind ({kind}): shares only "
            "(python -m tools.suite_budget REPORT --write on it sets one)"
        ]
    else:
        scaled = scaled_total(total, loop_s, reference)
        limit = reference["total_core_s"]
        over = scaled > limit
        speed = (
            f"; at the reference run's speed (Python loop {reference['reference_python_loop_s']} "
            f"s, here {loop_s:.2f} s) ~{scaled:,.0f}"
            if loop_s
            else ""
        )
        lines = [
            f"{head}{speed}; budget on {kind} {limit:,} "
            f"({'over' if over else 'within'}; tests/suite_budget.json)"
        ]
    grown = grown_files(by_file, budget)
    for name, seconds, share, allowed in grown:
        was = f"its share {allowed:.1%}" if allowed else "not in the budget"
        lines.append(
            f"  past its share: {name} {seconds:,.0f} core-s, {share:.1%} of the suite ({was})"
        )
    if over and not grown:
        lines.append("  no file past its share: the cost grew across files, or the machine is slow")
    return over and bool(grown), lines


def shares(by_file: dict) -> dict:
    """Each file's share of ``by_file``'s total, for a new budget."""
    total = sum(by_file.values())
    return {name: round(seconds / total, 4) for name, seconds in sorted(by_file.items())}
