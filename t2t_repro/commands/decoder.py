"""t2t-decoder: translate with a trained model (beam search or greedy), as tensor2tensor's.

    t2t-decoder --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \
        --decode_from_file=src.en --decode_to_file=out.de \
        --decode_hparams="beam_size=4,alpha=0.6,extra_length=50"
    t2t-decoder ... --decode_interactive
    t2t-decoder ... --checkpoint_path=RUN1/avg,RUN2/avg   (an ensemble of two runs)
    t2t-decoder ... (no file: decodes the problem's dev split, or test with --eval_use_test_set)
    t2t-decoder --problem=... --data_dir=DATA --engine=ctranslate2 --ct2_model_dir=EXPORT ...
        (the search in CTranslate2, on a t2t-exporter --export_format=ctranslate2 model)
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli
from t2t_repro.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t2t-decoder", description=__doc__.split("\n\n")[0])
    cli.add_problem_flags(parser, "the training output dir (checkpoints and hparams.json)")
    parser.add_argument(
        "--checkpoint_path",
        default="",
        help="a checkpoint prefix or directory (default: the latest in --output_dir); "
        "several, comma-separated, decode as an ensemble (their probabilities averaged; "
        "each member's hparams.json is read from its checkpoint's directory or its parent)",
    )
    parser.add_argument(
        "--decode_hparams",
        default="",
        help='e.g. "beam_size=4,alpha=0.6,'
        'extra_length=50,batch_size=32,return_beams=False,write_beam_scores=False"',
    )
    parser.add_argument("--decode_from_file", default="", help="source sentences, one per line")
    parser.add_argument("--decode_to_file", default="", help="where the translations go")
    parser.add_argument("--decode_interactive", action="store_true", help="translate stdin lines")
    parser.add_argument(
        "--eval_use_test_set",
        action="store_true",
        help="without --decode_from_file: decode the test split, not dev",
    )
    parser.add_argument(
        "--engine",
        default="tensorflow",
        choices=("tensorflow", "ctranslate2"),
        help="tensorflow: the checkpoint's model; ctranslate2: the model exported to "
        "--ct2_model_dir (needs the ctranslate2 package; docs/ctranslate2.md)",
    )
    parser.add_argument(
        "--ct2_model_dir",
        default="",
        help="with --engine=ctranslate2: the directory t2t-exporter --export_format=ctranslate2 "
        "wrote",
    )
    return parser


def load_setup(args: argparse.Namespace):
    """The decoder the flags name: the checkpoint's model, or its CTranslate2 export."""
    from t2t_repro.decoding import runner

    if args.engine == "tensorflow":
        if args.ct2_model_dir:
            raise UsageError("--ct2_model_dir needs --engine=ctranslate2.")
        return cli.load_decoder_from_flags(args, allow_ensemble=True)
    cli.require(args, "problem", "data_dir", "ct2_model_dir")
    if args.checkpoint_path:
        raise UsageError(
            "--engine=ctranslate2 decodes --ct2_model_dir, not --checkpoint_path "
            "(export the checkpoint first: t2t-exporter --export_format=ctranslate2)."
        )
    return runner.load_ctranslate2_decoder(
        args.problem,
        cli.expand(args.data_dir),
        cli.expand(args.ct2_model_dir),
        args.decode_hparams,
    )


def run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding import runner

    if args.decode_from_file and args.decode_to_file:
        runner.check_decode_paths(
            cli.expand(args.decode_from_file), cli.expand(args.decode_to_file)
        )
    setup = load_setup(args)
    print(f"restored {setup.checkpoint}", file=sys.stderr)
    if args.decode_interactive:
        runner.decode_interactive(setup)
    elif args.decode_from_file:
        out = args.decode_to_file or runner.default_output_name(
            args.decode_from_file, args.model, args.hparams_set, args.problem, setup.dhp
        )
        runner.decode_file(setup, cli.expand(args.decode_from_file), cli.expand(out))
        print(f"wrote {out}", file=sys.stderr)
    else:
        split = "test" if args.eval_use_test_set else "dev"
        first_checkpoint = args.checkpoint_path.split(",")[0] or args.ct2_model_dir
        out_dir = cli.expand(args.output_dir or os.path.dirname(first_checkpoint))
        out, ref = runner.decode_split(setup, cli.expand(args.tmp_dir), split, out_dir)
        print(f"wrote {out} (references: {ref})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-decoder", run, build_parser(), argv, uses_registry=True)


if __name__ == "__main__":
    sys.exit(main())
