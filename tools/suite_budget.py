"""The test suite's CPU budget, checked on a ``bench/bench_suite.py`` report: names each test
file grown past its share of the suite's core-seconds (``tests/suite_cpu.py`` says how).

    python -m tools.suite_budget bench/results/suite_cpu.json
    python -m tools.suite_budget bench/results/suite_cpu.json --write   # new shares and total

Exit 1 when the suite is over its budget (scaled to the report's machine by its Python-loop
calibration) and a file is named; else 0. ``--write`` makes the report the new budget: each
file's share, and its total at its own calibration (run it on a quiet, slow machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from bench import report as bench_report
from tests import suite_cpu


def calibration(results: dict) -> float | None:
    """The report's Python-loop seconds (the mean of its start and end calibrations)."""
    loops = [
        results.get(key, {}).get("python_loop_s")
        for key in ("calibration_start", "calibration_end")
    ]
    loops = [loop for loop in loops if loop]
    return sum(loops) / len(loops) if loops else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a bench/bench_suite.py JSON report")
    parser.add_argument("--budget", default=str(suite_cpu.BUDGET), help="the budget file")
    parser.add_argument("--write", action="store_true", help="make this report the budget")
    parser.add_argument(
        "--total_core_s",
        type=float,
        help="with --write: the suite's budget at --reference_python_loop_s (default: the "
        "report's own total at its own calibration)",
    )
    parser.add_argument("--reference_python_loop_s", type=float, help="with --total_core_s")
    args = parser.parse_args(argv)
    try:
        with open(args.results, encoding="utf-8") as f:
            results = json.load(f)
        by_file = results["cpu_accounts"]["by_file"]
    except (OSError, ValueError, KeyError) as e:
        print(
            f"suite_budget: error: {args.results}: not a bench_suite report ({e})", file=sys.stderr
        )
        return 2
    loop_s = calibration(results)
    if args.write:
        total, reference = sum(by_file.values()), loop_s
        if args.total_core_s:
            total, reference = args.total_core_s, args.reference_python_loop_s
        if not reference:
            print("suite_budget: error: no Python-loop calibration to scale by", file=sys.stderr)
            return 2
        budget = {
            "about": "tests/suite_cpu.py: the suite's accounted core-s and each file's share",
            "shares_from": f"{os.path.basename(args.results)} on {results.get('cpu', '?')}",
            "reference_python_loop_s": round(reference, 3),
            "total_core_s": round(total),
            "files": suite_cpu.shares(by_file),
        }
        bench_report.write_text_atomically(args.budget, json.dumps(budget, indent=1) + "\n")
        print(f"wrote {args.budget}: {budget['total_core_s']:,} core-s, {len(by_file)} files")
        return 0
    with open(args.budget, encoding="utf-8") as f:
        budget = json.load(f)
    failed, lines = suite_cpu.report(by_file, budget, loop_s)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
