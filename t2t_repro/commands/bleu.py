"""t2t-bleu: BLEU of a detokenised translation file against a reference file, every variant
labelled.

    t2t-bleu --translation=decodes.de --reference=newstest2014.de
    t2t-bleu --translation=... --reference=... --bleu_variant="sacreBLEU 13a cased" --json

Variants: sacreBLEU 13a/intl cased/uncased (with signatures), t2t-bleu cased/uncased (T2T's
own), and the paper's EN-DE number (tokenized, compound-split multi-bleu).
"""

from __future__ import annotations

import argparse
import json
import sys

from t2t_repro import fileio
from t2t_repro.commands import cli, t2t_flags

# T2T's --bleu_variant values (``tensor2tensor/bin/t2t_bleu.py``): its own BLEU, by case.
T2T_VARIANTS = {
    "both": ("t2t-bleu uncased", "t2t-bleu cased"),
    "cased": ("t2t-bleu cased",),
    "uncased": ("t2t-bleu uncased",),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t2t-bleu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--translation", default="", help="hypotheses, one sentence per line")
    parser.add_argument("--reference", default="", help="references, one sentence per line")
    parser.add_argument(
        "--bleu_variant",
        default="all",
        help="'all', one variant's name, or T2T's both/cased/uncased (its own BLEU)",
    )
    parser.add_argument(
        "--target_lang",
        default="de",
        help="language of the Moses tokenizer for the paper-style variant",
    )
    cli.add_bool(parser, "json", "print JSON instead of a table")
    t2t_flags.add_t2t_flags(parser, "t2t-bleu")
    return parser


def read_pair(translation: str, reference: str) -> tuple[list[str], list[str], int]:
    from t2t_repro.data.text_files import DataError, ReadStats, read_lines

    stats = ReadStats()
    for path in (translation, reference):
        if not fileio.isfile(path):
            raise FileNotFoundError(f"{path!r} does not exist.")
    hyps = list(read_lines(translation, stats))
    refs = list(read_lines(reference, stats))
    if len(hyps) != len(refs):
        raise DataError(
            f"{translation} has {len(hyps)} lines but {reference} has {len(refs)}; "
            "BLEU needs one translation per reference line."
        )
    return hyps, refs, stats.replaced_bytes


def run(args: argparse.Namespace) -> int:
    from t2t_repro.metrics.bleu import all_scores, looks_tokenized

    cli.require(args, "translation", "reference")
    hyps, refs, replaced = read_pair(cli.expand(args.translation), cli.expand(args.reference))
    if replaced:
        print(f"warning: {replaced} undecodable bytes were replaced.", file=sys.stderr)
    if looks_tokenized(hyps):
        print(
            "warning: the translations look tokenized (lines end in ' .'); sacreBLEU and "
            "t2t-bleu expect detokenized text.",
            file=sys.stderr,
        )
    results = all_scores(refs, hyps, args.target_lang)
    if args.bleu_variant != "all":
        wanted = T2T_VARIANTS.get(args.bleu_variant, (args.bleu_variant,))
        results = [r for r in results if r.name in wanted]
        if not results:
            names = ", ".join(r.name for r in all_scores(["a"], ["a"]))
            raise cli.UsageError(
                f"unknown --bleu_variant {args.bleu_variant!r}; one of: all, both, cased, "
                f"uncased, {names}"
            )
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        width = max(len(r.name) for r in results)
        for r in results:
            print(f"{r.name:<{width}}  {r.score:6.2f}  {r.definition}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return cli.run(
        "t2t-bleu",
        run,
        parser,
        argv,
        check_flags=lambda args: t2t_flags.check_t2t_flags(parser, args),
    )


if __name__ == "__main__":
    sys.exit(main())
