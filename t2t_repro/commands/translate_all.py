"""t2t-translate-all: translate a file with every checkpoint of a model dir, as tensor2tensor's.

    t2t-translate-all --model_dir=TRAIN --source=newstest2013.en --translations_dir=TRANSL \
        --problem=translate_ende_wmt32k --data_dir=DATA --beam_size=4 --alpha=0.6
    t2t-bleu --translations_dir=TRANSL --reference=newstest2013.de --event_dir=TRAIN/bleu

Writes TRANSL/<problem>-<step> per checkpoint (skipping those already there, so a rerun
continues); --wait_minutes follows a running job. --model_dir=TRAIN/avg (t2t-avg-all
--output_dir=TRAIN/avg) translates the averages instead.
"""

from __future__ import annotations

import argparse
import sys

from t2t_repro.commands import cli, t2t_flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-translate-all", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--model_dir", default="", help="directory to load checkpoints from")
    parser.add_argument("--source", default="", help="the source-language file to translate")
    parser.add_argument(
        "--translations_dir", default="translations", help="where the translations go"
    )
    parser.add_argument(
        "--min_steps", type=int, default=0, help="ignore checkpoints with fewer steps"
    )
    parser.add_argument(
        "--wait_minutes",
        type=float,
        default=0,
        help="wait up to N minutes for a new checkpoint (follow a running job)",
    )
    # T2T's defaults, always passed to the decoder (bin/t2t_translate_all.py), so a problem's
    # own beam and alpha (wsj_parsing_ldc's 21 and 0.3) do not apply here, as in T2T
    parser.add_argument("--beam_size", type=int, default=4, help="beam width")
    parser.add_argument("--alpha", type=float, default=0.6, help="length penalty")
    parser.add_argument(
        "--decode_hparams",
        default="",
        help='not a T2T flag: further decode hparams, e.g. "extra_length=50,batch_size=64" '
        "(they win over --beam_size/--alpha)",
    )
    parser.add_argument("--problem", default="", help="registered problem name")
    parser.add_argument("--data_dir", default="", help="vocab files")
    parser.add_argument("--model", default="transformer", help="registered model name")
    parser.add_argument(
        "--hparams_set",
        default="transformer_big_single_gpu",
        help="registered hparams set (T2T's default); a hparams.json in the model dir or its "
        "parent, the trained run's values, wins over it",
    )
    parser.add_argument("--hparams", default="", help='overrides, "name=value,..."')
    parser.add_argument(
        "--decoder_command",
        default="",
        help="T2T's: run this shell command per checkpoint instead of decoding here, "
        '{params} replaced by t2t-decoder\'s flags (e.g. "qsub run.sh t2t-decoder {params}"); '
        "T2T's other fields too: {out_file}, {model.steps}, {model.filename}, {model_dir}...",
    )
    parser.add_argument(
        "--t2t_usr_dir", default="", help="a module/package of your own registrations"
    )
    parser.add_argument(
        "--registry_help", action="store_true", help="list everything registered and exit"
    )
    t2t_flags.add_t2t_flags(parser, "t2t-translate-all")  # absl's flags (and T2T problem modules')
    return parser


def check_flags(args: argparse.Namespace) -> None:
    if args.min_steps < 0 or args.wait_minutes < 0:
        raise cli.UsageError("--min_steps and --wait_minutes must be 0 or more.")
    if not args.registry_help:
        cli.require(args, "model_dir", "source", "problem", "data_dir")


def run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding.translate_all import TranslateAllConfig, translate_all
    from t2t_repro.hparam import join_overrides

    beam, alpha = [f"beam_size={args.beam_size}"], [f"alpha={args.alpha}"]
    config = TranslateAllConfig(
        model_dir=cli.expand(args.model_dir),
        source=cli.expand(args.source),
        translations_dir=cli.expand(args.translations_dir),
        problem=args.problem,
        data_dir=cli.expand(args.data_dir),
        hparams_set=args.hparams_set,
        hparams=args.hparams,
        model=args.model,
        decode_hparams=join_overrides(*beam, *alpha, args.decode_hparams),
        min_steps=args.min_steps,
        wait_minutes=args.wait_minutes,
        decoder_command=args.decoder_command,
        t2t_usr_dir=args.t2t_usr_dir,
    )
    written = translate_all(config)
    print(f"wrote {len(written)} translation(s) in {config.translations_dir}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run(
        "t2t-translate-all", run, build_parser(), argv, uses_registry=True, check_flags=check_flags
    )


if __name__ == "__main__":
    sys.exit(main())
