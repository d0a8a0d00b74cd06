"""t2t-evalb: labelled bracket F1 of parser output against gold trees, as EVALB with COLLINS.prm.

    t2t-evalb --gold=wsj_23.trees --test=parsed.trees
    t2t-evalb --gold=DATA/wsj_parsing_ldc.test.trees --test=decodes.txt --linearized --json
    t2t-evalb --gold=... --test=... --per_sentence
    t2t-evalb --gold=... --test=... --align_punct     # Collins' punctuation preprocessing first

Files hold one tree per line or the treebank's .mrg layout (detected; --layout forces one).
With --linearized the test file is the decoder's output (one T2T target sequence per line),
turned into trees over the gold words. Malformed trees are reported with file:line and scored
as EVALB error sentences; see docs/parsing.md for every rule.
"""

from __future__ import annotations

import argparse
import json
import sys

from t2t_repro import fileio
from t2t_repro.commands import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-evalb", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--gold", default="", help="gold trees")
    parser.add_argument(
        "--test", default="", help="parser output: trees, or target sequences with --linearized"
    )
    parser.add_argument(
        "--linearized",
        action="store_true",
        help="the test file holds T2T target sequences (t2t-decoder output), not trees",
    )
    parser.add_argument(
        "--layout",
        default="auto",
        choices=("auto", "lines", "mrg"),
        help="tree file layout (auto: .mrg files and indented text are 'mrg')",
    )
    parser.add_argument(
        "--per_sentence",
        action="store_true",
        help="also print EVALB's per-sentence table (or list, with --json)",
    )
    parser.add_argument(
        "--align_punct",
        action="store_true",
        help="decide which words are "
        "punctuation (deleted by EVALB) from the gold tags, as Collins' preprocessing "
        "script does, so a mistagged comma is not a 'Length unmatch' error",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--evalb_root",
        action="store_true",
        help="score the unlabelled root of "
        "'( (S ...) )' as EVALB does, as a bracket labelled '' (default: as TOP)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.parsing.scoring import evalb_params, format_report, score_files

    cli.require(args, "gold", "test")
    gold, test = cli.expand(args.gold), cli.expand(args.test)
    for flag, path in (("--gold", gold), ("--test", test)):
        if not fileio.isfile(path):
            raise FileNotFoundError(f"{flag}: {path!r} does not exist.")
    scored = score_files(
        gold,
        test,
        linearized=args.linearized,
        layout=args.layout,
        align_punct=args.align_punct,
        params=evalb_params(args.evalb_root),
    )
    for line in scored.warnings():
        print(f"warning: {line}", file=sys.stderr)
    if args.json:
        out = scored.report.as_dict(per_sentence=args.per_sentence)
        out["malformed_trees"] = {
            "gold": scored.gold_stats.malformed,
            "test": scored.test_stats.malformed,
        }
        if scored.repairs is not None:
            out["repairs"] = scored.repairs.as_dict()
        if scored.punctuation_aligned is not None:
            out["punctuation_aligned"] = scored.punctuation_aligned
        print(json.dumps(out, indent=2))
    else:
        print(format_report(scored.report, per_sentence=args.per_sentence))
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-evalb", run, build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
