"""The test suite's CPU budget, checked on a ``bench/bench_suite.py`` report: names each test
file grown past its share of the suite's core-seconds (``tests/suite_cpu.py`` says how).

    python -m tools.suite_budget bench/results/suite_cpu.json
    python -m tools.suite_budget bench/results/suite_cpu.json --write   # new shares and total

Exit 1 when the suite is over its budget for the report's CPU kind (scaled to the machine's
phase by its Python-loop calibration) and a file is named; else 0. ``--write`` makes the
report the new shares and its kind's total (its own at its calibration, or ``--total_core_s``);
the other kinds' totals stay. A Python loop does not scale across kinds (AVX-512 and oneDNN
speed the compute, not the interpreter), hence one total per kind.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from bench import report as bench_report
from tests import suite_cpu


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
    parser.add_argument(
        "--reference_python_loop_s",
        type=float,
        help="with --total_core_s: the Python loop it holds at (default: the report's)",
    )
    parser.add_argument(
        "--cpu_kind",
        help="the CPU kind the report's total is checked against or written for (default: "
        "the report's cpu_kind, else this machine's)",
    )
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
    loop_s = bench_report.python_loop_s(results)
    kind = args.cpu_kind or results.get("cpu_kind") or suite_cpu.cpu_kind()
    try:
        with open(args.budget, encoding="utf-8") as f:
            budget = json.load(f)
    except FileNotFoundError:
        budget = {}
    except (OSError, ValueError) as e:
        print(f"suite_budget: error: {args.budget}: not a budget ({e})", file=sys.stderr)
        return 2
    if args.write:
        total, reference = sum(by_file.values()), loop_s
        if args.total_core_s:
            total, reference = args.total_core_s, args.reference_python_loop_s or loop_s
        if not reference:
            print("suite_budget: error: no Python-loop calibration to scale by", file=sys.stderr)
            return 2
        name = os.path.basename(args.results)
        totals = dict(budget.get("totals", {}))  # the other kinds' totals stay
        totals[kind] = {
            "total_core_s": round(total),
            "reference_python_loop_s": round(reference, 3),
            "from": name,
        }
        budget = {
            "about": "tests/suite_cpu.py: the suite's accounted core-s per CPU kind, and each "
            "file's share",
            "shares_from": f"{name} on {results.get('cpu', '?')}",
            "totals": totals,
            "files": suite_cpu.shares(by_file),
        }
        bench_report.write_text_atomically(args.budget, json.dumps(budget, indent=1) + "\n")
        print(f"wrote {args.budget}: {round(total):,} core-s on {kind}, {len(by_file)} files")
        return 0
    if not budget:
        message = f"suite_budget: error: {args.budget} does not exist (--write makes it)"
        print(message, file=sys.stderr)
        return 2
    failed, lines = suite_cpu.report(by_file, budget, loop_s, kind)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
