#!/usr/bin/env python3
"""t2t-evalb against the real EVALB program, row by row, on perturbed Penn Treebank sample trees.

    .venv/bin/python -m tools.evalb_crosscheck --evalb=/tmp/evalb/evalb --prm=/tmp/evalb/COLLINS.prm

EVALB (Sekine & Collins, ``evalb.c``) is not part of the project: compile it from its C source
yourself (``gcc -o evalb evalb.c``) and pass it and ``COLLINS.prm``. Gold trees are the
sample's dev and test sentences (wsj_0180-0199), both as datagen normalises them and as the
``.mrg`` files hold them (unlabelled root, function tags, traces) on one line, and the training
files' trees (wsj_0001-0179) as the ``.mrg`` files hold them; small runs add 14 error sentences
(EVALB stops at the 12th), lines that are not trees, no valid sentence, and no sentence of 40
words or fewer. Each gold tree gets a seeded perturbation (``tools/evalb_perturb.py``, the kinds
in turn), and the files go to both programs:
EVALB with ``-p COLLINS.prm`` (and ``-e`` raised where a run has more than its 11 tolerated
error sentences), ours through ``t2t-evalb --per_sentence``. Compared as text: every
per-sentence row, the totals row and every summary line.

Two modes: ``--evalb_root`` against EVALB on the files as they are, and the default against
EVALB on the same files with an unlabelled root ``( (S ...) )`` written ``(TOP (S ...))``,
which is the deliberate difference of the default. Rows of lines that are not trees are
listed apart (``deliberate_deviations``): both programs count them as errors, but EVALB's row
shows what it read. Writes a JSON report (``--out``) with the counts and every mismatch, and
prints the mismatches on stderr.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

from bench.report import emit, write_text_atomically
from tools.evalb_perturb import KINDS, line_of

SHARED = os.path.join(
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "..", "shared", "data"
)
SEPARATOR = "=" * 76
ROW_FIELDS = (
    "id length status recall precision matched gold test crossing words correct_tags tag_accuracy"
).split()
NO_LIMIT = ["-e", "1000000"]  # after -p, so it overrides COLLINS.prm's MAX_ERROR 10
# evalb.c's fixed buffers: a longer line or sentence would overflow them.
EVALB_MAX_LINE, EVALB_MAX_ITEMS = 4999, 199
ERROR_KINDS = ("drop_word", "add_word", "change_word", "word_as_punct")
OWN_RUN_KINDS = ("unbalanced",)  # compared in a run of their own
UNLABELLED_ROOT = re.compile(r"^(\s*)\((?=\s*\()")


def sample_trees(data_dir: str, first: int, last: int) -> tuple[list, list]:
    """(normalised, raw) trees of the sample's files wsj_<first>-wsj_<last>, in file order."""
    from t2t_repro.parsing.tree_files import TreeReadStats
    from t2t_repro.parsing.trees import normalize
    from t2t_repro.parsing.wsj_splits import find_mrg_files, iter_raw_trees

    files = [f for f in find_mrg_files(data_dir) if first <= f.number <= last]
    raw = list(iter_raw_trees(files, TreeReadStats()))
    normalised = [t for t in (normalize(r) for r in raw) if t is not None]
    return normalised, raw


def fits_evalb(line: str) -> bool:
    return len(line) < EVALB_MAX_LINE and line.count("(") < EVALB_MAX_ITEMS


def perturbed_pairs(trees: list, seed: int, offset: int) -> list[tuple[str, str, str]]:
    """(kind, gold line, test line) for each tree, the kinds in turn, each pair its own rng."""
    names = [name for name in KINDS if name not in OWN_RUN_KINDS]
    pairs = []
    for i, tree in enumerate(trees):
        kind = names[(i + offset) % len(names)]
        gold, test = KINDS[kind](tree, random.Random(seed * 1_000_003 + offset * 7919 + i))
        pairs.append((kind, gold, test))
    return pairs


def build_runs(seed: int, data_dir: str) -> tuple[list[dict], int]:
    """The runs (files given to both programs) and how many trees were too big for EVALB."""
    normalised, raw = sample_trees(data_dir, 180, 199)
    train = sample_trees(data_dir, 1, 179)[1]
    fitting = [t for t in normalised if fits_evalb(line_of(t))]
    raw_fitting = [t for t in raw if fits_evalb(line_of(t))]
    train_fitting = [t for t in train if fits_evalb(line_of(t))]
    excluded = sum(len(a) - len(b) for a, b in ((normalised, fitting), (raw, raw_fitting)))
    excluded += len(train) - len(train_fitting)
    runs = []
    pairs = perturbed_pairs(fitting, seed, 0)
    pairs[-1] = ("blank_test", *KINDS["blank_test"](fitting[-1], random.Random(seed)))
    runs.append({"name": "normalised", "pairs": pairs, "evalb_args": NO_LIMIT})
    pairs = perturbed_pairs(raw_fitting, seed, 11)
    pairs[-1] = ("blank_both", "", "")
    runs.append({"name": "mrg", "pairs": pairs, "evalb_args": NO_LIMIT})
    pairs = perturbed_pairs(train_fitting, seed, 5)
    runs.append({"name": "mrg_train", "pairs": pairs, "evalb_args": NO_LIMIT})
    rng = random.Random(seed)
    short = [t for t in fitting if len(t.words()) <= 40]
    picks = rng.sample(short, 14)
    runs.append(
        {
            "name": "max_error",  # 14 error sentences under COLLINS.prm's MAX_ERROR 10
            "pairs": [
                (k, *KINDS[k](t, rng)) for k, t in zip(ERROR_KINDS * 4, picks[:14], strict=False)
            ],
            "evalb_args": [],
        }
    )
    runs.append(
        {
            "name": "no_valid_sentence",  # every test line blank: F1 is 0/0
            "pairs": [("blank_test", *KINDS["blank_test"](t, rng)) for t in picks[:3]],
            "evalb_args": [],
        }
    )
    runs.append(
        {
            "name": "unbalanced",
            "pairs": [("unbalanced", *KINDS["unbalanced"](t, rng)) for t in picks[3:13]],
            "evalb_args": NO_LIMIT,
            "deliberate_rows": "a line that is not a tree: an error sentence in both, but EVALB's "
            "row shows the figures of the brackets it could read, ours zeros",
        }
    )
    long = [t for t in fitting if len(t.words()) > 40][:4]
    runs.append(
        {
            "name": "long_only",  # nothing in the len<=40 block
            "pairs": [
                (k, *KINDS[k](t, rng))
                for k, t in zip(("identity", "relabel") * 2, long, strict=False)
            ],
            "evalb_args": [],
        }
    )
    return runs, excluded


def write_lines(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def run_evalb(evalb: str, prm: str, gold: str, test: str, extra: list[str]) -> tuple[int, str]:
    done = subprocess.run(
        [evalb, "-p", prm, *extra, gold, test], capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout


def run_ours(gold: str, test: str, evalb_root: bool) -> tuple[int, str]:
    from t2t_repro.commands import evalb as tool

    argv = [f"--gold={gold}", f"--test={test}", "--per_sentence", "--layout=lines"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tool.main(argv + (["--evalb_root"] if evalb_root else []))
    return rc, out.getvalue()


def sections(text: str) -> dict:
    """Header, rows by sentence id, totals row and summary lines of EVALB's output."""
    lines = text.rstrip("\n").split("\n")
    seps = [i for i, line in enumerate(lines) if line == SEPARATOR]
    end = seps[1] if len(seps) > 1 else len(lines)
    rows = {}
    for line in lines[seps[0] + 1 : end]:
        rows[int(line.split()[0])] = line
    out = {"header": lines[: seps[0]], "rows": rows, "totals": None, "summary": {}}
    if len(seps) > 1:
        out["totals"] = lines[end + 1]
        block = ""
        for line in lines[end + 2 :]:
            if line.startswith("-- "):
                block = line.strip("- ")
            elif "=" in line and not line.startswith("==="):
                out["summary"][f"{block}: {line.split('=')[0].strip()}"] = line
            elif line.strip() and line != "=== Summary ===":
                out["summary"][f"extra: {line}"] = line
        out["summary"]["=== Summary ==="] = (
            "=== Summary ===" if "=== Summary ===" in lines else None
        )
    return out


def differing_fields(evalb_row: str | None, our_row: str | None) -> list[str]:
    if evalb_row is None or our_row is None:
        return ["row missing"]
    a, b = evalb_row.split(), our_row.split()
    fields = [name for name, x, y in zip(ROW_FIELDS, a, b, strict=False) if x != y]
    if len(a) != len(b):
        fields.append(f"{len(a)} fields against {len(b)}")
    return fields or ["spacing"]


def compare_run(run: dict, evalb_out: str, ours_out: str, mode: str, rc: int) -> dict:
    """Counts and mismatches of one run in one mode."""
    theirs, ours = sections(evalb_out), sections(ours_out)
    mismatches, deliberate = [], []
    common = dict(run=run["name"], mode=mode)
    for i, (kind, gold, test) in enumerate(run["pairs"], 1):
        if i not in theirs["rows"] and rc != 0:
            continue  # EVALB stopped before this sentence (MAX_ERROR)
        a, b = theirs["rows"].get(i), ours["rows"].get(i)
        if (
            a != b
            and run.get("deliberate_rows")
            and a
            and b
            and a.split()[2] == b.split()[2] == "1"
        ):
            deliberate.append(dict(common, where=f"sentence {i}", why=run["deliberate_rows"],
                                   test=test, evalb=a, ours=b))  # fmt: skip
        elif a != b:
            mismatches.append(
                dict(common, where=f"sentence {i}", kind=kind, gold=gold, test=test, evalb=a,
                     ours=b, fields=differing_fields(a, b))
            )  # fmt: skip
    compared_rows = sum(1 for i in range(1, len(run["pairs"]) + 1) if i in theirs["rows"])
    if theirs["header"] != ours["header"]:
        mismatches.append(dict(common, where="header", evalb=theirs["header"], ours=ours["header"]))
    summary_lines = 0
    if theirs["totals"] is not None:
        summary_lines = 1 + len(theirs["summary"])
        if theirs["totals"] != ours["totals"]:
            mismatches.append(
                dict(common, where="totals row", evalb=theirs["totals"], ours=ours["totals"])
            )
        for key in sorted(set(theirs["summary"]) | set(ours["summary"])):
            a, b = theirs["summary"].get(key), ours["summary"].get(key)
            if a != b:
                mismatches.append(dict(common, where=f"summary {key}", evalb=a, ours=b))
    return {
        "rows_compared": compared_rows,
        "summary_lines_compared": summary_lines,
        "mismatches": mismatches,
        "deliberate": deliberate,
    }


def crosscheck(evalb: str, prm: str, seed: int, data_dir: str) -> dict:
    runs, excluded = build_runs(seed, data_dir)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seed": seed,
        "evalb": evalb,
        "prm": prm,
        "trees_too_big_for_evalb": excluded,
    }
    report["runs"], mismatches, deliberate = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            gold, test = os.path.join(tmp, "gold.txt"), os.path.join(tmp, "test.txt")
            gold_top, test_top = gold + ".top", test + ".top"
            write_lines(gold, [g for _, g, _ in run["pairs"]])
            write_lines(test, [t for _, _, t in run["pairs"]])
            write_lines(gold_top, [UNLABELLED_ROOT.sub(r"\1(TOP", g) for _, g, _ in run["pairs"]])
            write_lines(test_top, [UNLABELLED_ROOT.sub(r"\1(TOP", t) for _, _, t in run["pairs"]])
            entry = {
                "name": run["name"],
                "pairs": len(run["pairs"]),
                "kinds": dict(collections.Counter(k for k, _, _ in run["pairs"])),
                "evalb_args": ["-p", "COLLINS.prm", *run["evalb_args"]],
                "modes": {},
            }
            for mode, files in (("evalb_root", (gold, test)), ("default", (gold_top, test_top))):
                rc, theirs = run_evalb(evalb, prm, *files, run["evalb_args"])
                our_rc, ours = run_ours(*files, evalb_root=mode == "evalb_root")
                result = compare_run(run, theirs, ours, mode, rc)
                entry["evalb_exit_status"] = rc
                entry["t2t_evalb_exit_status"] = our_rc
                entry["evalb_rows_printed"] = len(sections(theirs)["rows"])
                mismatches += result.pop("mismatches")
                deliberate += result.pop("deliberate")
                entry["modes"][mode] = result
            report["runs"].append(entry)
    report["pairs"] = sum(r["pairs"] for r in report["runs"])
    report["rows_compared"] = sum(
        m["rows_compared"] for r in report["runs"] for m in r["modes"].values()
    )
    report["summary_lines_compared"] = sum(
        m["summary_lines_compared"] for r in report["runs"] for m in r["modes"].values()
    )
    report["mismatch_count"] = len(mismatches)
    report["mismatches_by_kind"] = dict(
        collections.Counter(f"{m['mode']}: {m.get('kind', m['where'])}" for m in mismatches)
    )
    report["mismatches"] = mismatches
    report["deliberate_deviation_count"] = len(deliberate)
    report["deliberate_deviations"] = deliberate
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalb", required=True, help="the compiled EVALB program")
    parser.add_argument("--prm", required=True, help="COLLINS.prm")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--data_dir", default=os.path.join(SHARED, "ptb_sample"))
    parser.add_argument("--out", default="bench/results/evalb_crosscheck.json")
    args = parser.parse_args(argv)
    for flag, path in (("--evalb", args.evalb), ("--prm", args.prm)):
        if not os.path.isfile(path):
            sys.exit(f"evalb_crosscheck: {flag} {path!r} does not exist (compile evalb.c).")
    if not os.path.isdir(args.data_dir):
        sys.exit(f"evalb_crosscheck: {args.data_dir} is absent (the PTB sample, ../shared/data).")
    report = crosscheck(args.evalb, args.prm, args.seed, args.data_dir)
    for m in report["mismatches"]:
        print(f"MISMATCH {m['run']} [{m['mode']}] {m['where']} {m.get('kind', '')} "
              f"{m.get('fields', '')}\n  evalb: {m['evalb']}\n  ours:  {m['ours']}",
              file=sys.stderr)  # fmt: skip
    emit({k: v for k, v in report.items() if k not in ("mismatches", "deliberate_deviations")})
    write_text_atomically(args.out, json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
