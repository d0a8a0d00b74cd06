"""t2t-bleu: BLEU of a detokenised translation file against a reference file.

    t2t-bleu --translation=decodes.de --reference=newstest2014.de
    t2t-bleu --translation=... --reference=... --bleu_variant=all
    t2t-bleu --translation=... --reference=... --bleu_variant="sacreBLEU 13a cased" --json

With T2T's --bleu_variant (both, the default, cased or uncased) stdout has T2T's lines
``BLEU_uncased =  27.31`` / ``BLEU_cased =  26.80`` (``tensor2tensor/bin/t2t_bleu.py``,
``main``: ``"%6.2f"``), and the other variants' labelled table goes to stderr. With
--bleu_variant=all or one variant's name, stdout has that table; --json prints the variants
asked for (all by default) as JSON.
    t2t-bleu --translations_dir=TRANSL --reference=newstest2013.de --event_dir=TRAIN/bleu

Variants: sacreBLEU 13a/intl cased/uncased (with signatures), t2t-bleu cased/uncased (T2T's
own), and the paper's EN-DE number (tokenized, compound-split multi-bleu).

With --translations_dir (T2T's second mode): T2T's BLEU of every <problem>-<step> file that
t2t-translate-all wrote, as TensorBoard scalars BLEU_uncased and BLEU_cased at each step in
--event_dir; steps already written there are skipped (last_evaluated_step.txt), and
--wait_minutes follows a running t2t-translate-all.
"""

from __future__ import annotations

import argparse
import json
import sys

from t2t_repro.commands import cli, t2t_flags

# T2T's --bleu_variant values (``tensor2tensor/bin/t2t_bleu.py``): its own BLEU, by case.
T2T_VARIANTS = {
    "both": ("t2t-bleu uncased", "t2t-bleu cased"),
    "cased": ("t2t-bleu cased",),
    "uncased": ("t2t-bleu uncased",),
}
# The tag T2T prints for each (``main``: "BLEU_uncased = %6.2f", then "BLEU_cased = %6.2f").
T2T_TAGS = {"t2t-bleu uncased": "BLEU_uncased", "t2t-bleu cased": "BLEU_cased"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-bleu", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--translation", default="", help="hypotheses, one sentence per line")
    parser.add_argument("--reference", default="", help="references, one sentence per line")
    parser.add_argument(
        "--bleu_variant",
        default=None,
        help="T2T's both/cased/uncased (its own BLEU, T2T's lines; default: both, with --json "
        "all), 'all', or one variant's name",
    )
    parser.add_argument(
        "--target_lang",
        default="de",
        help="language of the Moses tokenizer for the paper-style variant",
    )
    cli.add_bool(parser, "json", "print JSON instead of a table")
    dir_mode = parser.add_argument_group(
        "every checkpoint (T2T's flags; --bleu_variant there: both, cased or uncased)"
    )
    dir_mode.add_argument(
        "--translations_dir", default="", help="t2t-translate-all's translations to score"
    )
    dir_mode.add_argument("--event_dir", default="", help="where the TensorBoard events go")
    dir_mode.add_argument(
        "--tag_suffix", default="", help="appended to the tags BLEU_cased and BLEU_uncased"
    )
    dir_mode.add_argument(
        "--min_steps",
        type=int,
        default=-1,
        help="skip translations with fewer steps (-1: those after the last step written to "
        "--event_dir)",
    )
    dir_mode.add_argument(
        "--wait_minutes", type=float, default=0, help="wait up to N minutes for a new file"
    )
    cli.add_bool(
        dir_mode,
        "report_zero",
        "write BLEU=0 at step 0 dated like the oldest file in --translations_dir "
        "(default: when starting from step 0)",
        default=None,
    )
    t2t_flags.add_t2t_flags(parser, "t2t-bleu")
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.metrics.bleu import all_scores, looks_tokenized
    from t2t_repro.metrics.bleu_per_step import read_translation_pair

    if args.translations_dir:
        return run_every_step(args)
    cli.require(args, "translation", "reference")
    hyps, refs, replaced = read_translation_pair(
        cli.expand(args.translation), cli.expand(args.reference)
    )
    if replaced:
        print(f"warning: {replaced} undecodable bytes were replaced.", file=sys.stderr)
    if looks_tokenized(hyps):
        print(
            "warning: the translations look tokenized (lines end in ' .'); sacreBLEU and "
            "t2t-bleu expect detokenized text.",
            file=sys.stderr,
        )
    results = all_scores(refs, hyps, args.target_lang)
    if args.bleu_variant is None:
        args.bleu_variant = "all" if args.json else "both"
    if args.bleu_variant in T2T_VARIANTS and not args.json:
        wanted = T2T_VARIANTS[args.bleu_variant]
        print_table([r for r in results if r.name not in wanted], sys.stderr)
        for name in wanted:  # T2T's order: uncased, then cased
            score = next(r.score for r in results if r.name == name)
            print(f"{T2T_TAGS[name]} = {score:6.2f}")
        return 0
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
        print_table(results, sys.stdout)
    return 0


def print_table(results: list, stream) -> None:
    """One labelled line per variant: name, score, definition."""
    width = max((len(r.name) for r in results), default=0)
    for r in results:
        print(f"{r.name:<{width}}  {r.score:6.2f}  {r.definition}", file=stream)


def run_every_step(args: argparse.Namespace) -> int:
    from t2t_repro import console
    from t2t_repro.metrics.bleu_per_step import bleu_every_step

    if args.translation:
        raise cli.UsageError("give --translation or --translations_dir, not both.")
    cli.require(args, "reference", "event_dir")
    if args.json or args.bleu_variant == "all" or args.target_lang != "de":
        raise cli.UsageError(
            "--json, --bleu_variant=all and --target_lang are --translation's (the labelled "
            "variants); --translations_dir writes T2T's BLEU_uncased/BLEU_cased events "
            "(--bleu_variant=both, cased or uncased)."
        )
    if args.min_steps < -1 or args.wait_minutes < 0:
        raise cli.UsageError("--min_steps must be -1 or more and --wait_minutes 0 or more.")
    console.start_tensorflow()  # the event file is written with TensorFlow, quietly
    results = bleu_every_step(
        cli.expand(args.translations_dir),
        cli.expand(args.reference),
        cli.expand(args.event_dir),
        bleu_variant=args.bleu_variant or "both",
        tag_suffix=args.tag_suffix,
        min_steps=args.min_steps,
        wait_minutes=args.wait_minutes,
        report_zero=args.report_zero,
    )
    print(f"wrote BLEU of {len(results)} step(s) to {args.event_dir}", file=sys.stderr)
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
