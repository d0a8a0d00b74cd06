"""t2t-decoder: translate with a trained model (beam search or greedy), as tensor2tensor's.

    t2t-decoder --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \
        --decode_from_file=src.en --decode_to_file=out.de \
        --decode_hparams="beam_size=4,alpha=0.6,extra_length=50"
    t2t-decoder ... --decode_interactive
    t2t-decoder ... --checkpoint_path=RUN1/avg,RUN2/avg   (an ensemble of two runs)
    t2t-decoder ... (no file: decodes the problem's dev split, or test with --eval_use_test_set)
    t2t-decoder ... --hparams=sampling_method=random,sampling_temp=0.8 \
        --decode_hparams=beam_size=1,num_samples=5 --random_seed=1   (5 samples per line)
    t2t-decoder ... --score_file=pairs.tsv --decode_to_file=scores.txt   (source<TAB>target)
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli


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
        'extra_length=50,batch_size=32,return_beams=False,write_beam_scores=False"; '
        "num_samples=N: N sampled outputs per input (with beam_size=1 and "
        "--hparams=sampling_method=random); delimiter: ends each input and output record "
        "(default \\n)",
    )
    parser.add_argument("--decode_from_file", default="", help="source sentences, one per line")
    parser.add_argument("--decode_to_file", default="", help="where the translations go")
    parser.add_argument("--decode_interactive", action="store_true", help="translate stdin lines")
    parser.add_argument(
        "--score_file",
        default="",
        help="score source<TAB>target lines instead of decoding: one score a line (nan for a "
        "line that cannot be scored) into --decode_to_file",
    )
    parser.add_argument(
        "--score_type",
        choices=["loss", "log_prob"],
        default="loss",
        help="with --score_file: loss = T2T's mean per-token cross entropy of the target "
        "(EOS included); log_prob = log p(target | source), the sum over its tokens",
    )
    cli.add_random_seed_flag(parser)
    parser.add_argument(
        "--eval_use_test_set",
        action="store_true",
        help="without --decode_from_file: decode the test split, not dev",
    )
    return parser


def check_flags(args: argparse.Namespace) -> None:
    if args.score_file:
        if not args.decode_to_file:
            raise cli.UsageError("--score_file needs --decode_to_file (where the scores go).")
        if args.decode_from_file or args.decode_interactive:
            raise cli.UsageError(
                "--score_file scores pairs; it does not decode: drop --decode_from_file and "
                "--decode_interactive."
            )


def run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding import runner

    if args.score_file:
        runner.check_decode_paths(
            cli.expand(args.score_file), cli.expand(args.decode_to_file), "--score_file"
        )
        setup = cli.load_decoder_from_flags(args)
        print(f"restored {setup.checkpoint}", file=sys.stderr)
        scores = runner.score_file(
            setup, cli.expand(args.score_file), cli.expand(args.decode_to_file), args.score_type
        )
        bad = sum(score != score for score in scores)
        print(
            f"wrote {len(scores)} scores to {args.decode_to_file}"
            + (f" ({bad} lines not scored: nan)" if bad else ""),
            file=sys.stderr,
        )
        return 0
    if args.decode_from_file and args.decode_to_file:
        runner.check_decode_paths(
            cli.expand(args.decode_from_file), cli.expand(args.decode_to_file)
        )
    setup = cli.load_decoder_from_flags(args, allow_ensemble=True)
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
        first_checkpoint = args.checkpoint_path.split(",")[0]
        out_dir = cli.expand(args.output_dir or os.path.dirname(first_checkpoint))
        out, ref = runner.decode_split(setup, cli.expand(args.tmp_dir), split, out_dir)
        print(f"wrote {out} (references: {ref})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run(
        "t2t-decoder", run, build_parser(), argv, uses_registry=True, check_flags=check_flags
    )


if __name__ == "__main__":
    sys.exit(main())
