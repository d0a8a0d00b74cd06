"""The suite's cost on a CPU kind this machine is not, projected from a run of an older tree on
that kind and the same tree run here: each test file's ratio between the two carries this
tree's cost here over to that kind.

    python -m tools.project_suite NOW.json --pair THERE.json:SAME_TREE_HERE.json \\
        [--pair ...] [--cpu_kind "AMD EPYC, no AVX-512, Zen 1"] [--noloop_scaling]

NOW.json and each SAME_TREE_HERE.json are ``bench/bench_suite.py`` reports from this machine
in one sitting and with the same ``--env`` (the old tree checked out with ``git worktree``);
THERE.json is the old tree's report from the other kind. A file is dearer there by its own
ratio when it cost at least ``MIN_FILE_CORE_S`` in both old runs, else by the whole suite's.
The projection is then checked against that kind's budget total (``tests/suite_budget.json``)
at the THERE run's Python-loop speed. Exit 1 when a projection is over, 2 on a bad report.

Why: the slowest kind (AMD EPYC Zen 1) is seldom the machine a session runs on, and the
Python loop alone understates its cost (its float32 matmul is ~7x slower than an AMX host's,
its interpreter ~3x); a file's ratio on the same code holds both.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import report as bench_report
from tests import suite_cpu

# A file cheaper than this in either old run (seconds of CPU) is projected by the whole
# suite's ratio: its own is mostly noise.
MIN_FILE_CORE_S = 0.5
# NOW's and HERE's Python loops further apart than this are not one sitting: the loop scaling
# in ``project`` then misleads. On one Intel Xeon (AMX) host, the same tree's suite cost 1.8x
# the accounted core-s of a calm run in a slow phase whose loop was 2.3x (0.41 s against
# 0.18 s), so scaling by the loop projected ~22% too low; runs in one sitting were within 7%.
MAX_LOOP_RATIO = 1.15


class ReportError(ValueError):
    """A file that is not a bench_suite report."""


def load_report(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        by_file, busy, cores = (
            report["cpu_accounts"]["by_file"],
            report["busy_core_s"],
            report["mean_busy_cores"],
        )
        if not isinstance(by_file, dict) or not by_file:
            raise ValueError("no per-file CPU")
        if not all(_number(v) and v >= 0 for v in (*by_file.values(), busy, cores)):
            raise ValueError("a per-file CPU, busy core-s or busy cores that is not a number")
        if not (busy > 0 and cores > 0):
            raise ValueError("no busy core-s or busy cores")
        bench_report.python_loop_s(report)  # a calibration that is not one raises here
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ReportError(f"{path}: not a bench_suite report ({e})") from e
    return report


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def file_ratios(there: dict, here: dict) -> tuple[dict[str, float], float]:
    """Per-file ratios (there / here) for the files dear enough in both, and the whole suite's
    ratio (over the files both ran) for the rest."""
    common = [name for name in there if name in here]
    if not sum(here[n] for n in common) > 0:
        raise ReportError("the two runs of the old tree share no test file with CPU")
    whole = sum(there[n] for n in common) / sum(here[n] for n in common)
    ratios = {
        name: there[name] / here[name]
        for name in common
        if min(there[name], here[name]) >= MIN_FILE_CORE_S
    }
    return ratios, whole


def project(now: dict, there: dict, here: dict, loop_scaling: bool = True) -> dict:
    """``now``'s accounted and busy core-s and wall at ``there``'s kind and speed. ``now``'s
    figures are first brought to ``here``'s Python-loop speed (one sitting: a few percent),
    unless ``loop_scaling`` is off: for a host whose loop swings more than its cost (an AMD
    EPYC Zen 3 host, 2026-12-07: one tree's two runs 3% apart in accounted core-s while their
    loops were 12% apart, the slower loop with the cheaper run)."""
    here_loop, now_loop = bench_report.python_loop_s(here), bench_report.python_loop_s(now)
    speed = here_loop / now_loop if loop_scaling and here_loop and now_loop else 1.0
    ratios, whole = file_ratios(there["cpu_accounts"]["by_file"], here["cpu_accounts"]["by_file"])
    accounted = speed * sum(
        seconds * ratios.get(name, whole)
        for name, seconds in now["cpu_accounts"]["by_file"].items()
    )
    busy = speed * now["busy_core_s"] * there["busy_core_s"] / here["busy_core_s"]
    return {
        "accounted_core_s": accounted,
        "whole_suite_ratio": whole,
        "files_by_own_ratio": len(ratios),
        "busy_core_s": busy,
        "wall_s": busy / there["mean_busy_cores"],
    }


def mismatches(now: dict, here: dict, loop_scaling: bool = True) -> list[str]:
    """What makes ``here`` not side by side with ``now`` (their loops only when the
    projection scales by them)."""
    found = []
    for key in ("cpu", "env", "cores"):  # the kind: refused in _inputs
        if now.get(key) != here.get(key):
            found.append(f"{key} {here.get(key)!r} against {now.get(key)!r}")
    loops = bench_report.python_loop_s(here), bench_report.python_loop_s(now)
    if loop_scaling and all(loops) and max(loops) / min(loops) > MAX_LOOP_RATIO:
        found.append(
            f"Python loop {loops[0]:.3f} s against {loops[1]:.3f} s (the host's speed changed "
            "between them; the projection's loop scaling is good for a few percent only: "
            "rerun both in one sitting)"
        )
    return found


def _budget_totals(path: str) -> dict:
    try:
        totals = suite_cpu.load_budget(Path(path))["totals"]
        for kind, entry in totals.items():
            if not (_number(entry["total_core_s"]) and entry["reference_python_loop_s"] > 0):
                raise ValueError(f"{kind!r} has no total or reference loop")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ReportError(f"{path}: not a budget ({e})") from e
    return totals


def _inputs(args) -> tuple[dict, list]:
    """NOW's report and, per pair, its reports, kind, budget entry and projection: every bad
    input refused before anything is printed."""
    now = load_report(args.now)
    totals = _budget_totals(args.budget)
    pairs = []
    for pair in args.pair:
        there_path, sep, here_path = pair.partition(":")
        if not sep:
            raise ReportError(f"--pair {pair!r}: give THERE.json:HERE.json")
        there, here = load_report(there_path), load_report(here_path)
        if here.get("cpu_kind") != now.get("cpu_kind"):
            raise ReportError(
                f"{here_path} ran on {here.get('cpu_kind')!r}, {args.now} on "
                f"{now.get('cpu_kind')!r}: HERE must come from this machine (THERE:HERE?)"
            )
        kind = args.cpu_kind or there.get("cpu_kind", "")
        if kind not in totals:
            raise ReportError(
                f"no budget total for {kind!r} ({there_path}; --cpu_kind names one of: "
                f"{', '.join(totals)})"
            )
        try:
            projection = project(now, there, here, args.loop_scaling)
        except ReportError as e:
            raise ReportError(f"{there_path}, {here_path}: {e}") from e
        pairs.append((there_path, there, here_path, here, kind, totals[kind], projection))
    return now, pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("now", help="this tree's bench_suite report from this machine")
    parser.add_argument(
        "--pair",
        action="append",
        required=True,
        metavar="THERE:HERE",
        help="an old tree's report from the other kind and the same tree's from this machine",
    )
    parser.add_argument("--budget", default=str(suite_cpu.BUDGET), help="the budget file")
    parser.add_argument(
        "--cpu_kind", help="the other kind's budget name (default: THERE's cpu_kind)"
    )
    parser.add_argument(
        "--noloop_scaling",
        dest="loop_scaling",
        action="store_false",
        help="take NOW and each HERE as run at one speed (no Python-loop scaling between them)",
    )
    args = parser.parse_args(argv)
    try:
        now, pairs = _inputs(args)
    except ReportError as e:
        print(f"project_suite: error: {e}", file=sys.stderr)
        return 2
    over = False
    for there_path, there, here_path, here, kind, reference, p in pairs:
        loop = bench_report.python_loop_s(there)
        # The budget's own scaling (a run at loop L is checked at its reference loop's speed).
        scaled = suite_cpu.scaled_total(p["accounted_core_s"], loop, reference)
        over |= bool(loop) and scaled > reference["total_core_s"]
        print(
            f"{there_path} over {here_path}: {p['whole_suite_ratio']:.2f}x the suite "
            f"({p['files_by_own_ratio']} files by their own ratio)"
        )
        for problem in mismatches(now, here, args.loop_scaling):
            print(f"  not side by side with {args.now}: {problem}")
        verdict = (
            f"~{scaled:,.0f} at the budget's loop {reference['reference_python_loop_s']} s, "
            f"budget {reference['total_core_s']:,}: "
            f"{'over' if scaled > reference['total_core_s'] else 'within'}"
            if loop
            else "no calibration there to check the budget at"
        )
        minutes, seconds = divmod(round(p["wall_s"]), 60)
        print(
            f"  {args.now} on {kind} at loop {loop or 0:.3f} s: "
            f"~{p['accounted_core_s']:,.0f} accounted core-s ({verdict}); "
            f"~{p['busy_core_s']:,.0f} busy core-s, ~{minutes}:{seconds:02d} wall at "
            f"{there['mean_busy_cores']} busy cores"
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
