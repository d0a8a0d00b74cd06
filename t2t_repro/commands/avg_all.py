"""t2t-avg-all: average the model weights of the last n checkpoints of a training run.

    t2t-avg-all --model_dir=TRAIN --output_dir=TRAIN/avg --n=5     # the paper: 5 (base), 20 (big)

The result is a checkpoint the decoder loads: t2t-decoder --checkpoint_path=TRAIN/avg ...
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli, t2t_flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t2t-avg-all", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model_dir", default="", help="a t2t-trainer output_dir")
    parser.add_argument(
        "--output_dir", default="", help="where the average goes (default: <model_dir>/avg)"
    )
    parser.add_argument(
        "--n",
        type=int,
        default=8,
        help="how many of the newest checkpoints "
        "(T2T's default 8; the paper used 5 for base and 20 for big)",
    )
    parser.add_argument(
        "--max_step",
        type=int,
        default=0,
        help="not T2T: average the newest n at or before this step (0: the newest n), e.g. "
        "the checkpoints around the best dev score",
    )
    parser.add_argument(
        "--min_steps", type=int, default=0, help="ignore checkpoints before this step (T2T's)"
    )
    parser.add_argument("--model", default="transformer")
    t2t_flags.add_t2t_flags(parser, "t2t-avg-all")
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.checkpoints.averaging import average_checkpoints

    cli.require(args, "model_dir")
    if args.n < 1:
        raise cli.UsageError("--n must be at least 1.")
    model_dir = cli.expand(args.model_dir)
    output_dir = cli.expand(args.output_dir) or os.path.join(model_dir, "avg")
    if args.max_step < 0 or args.min_steps < 0:
        raise cli.UsageError("--max_step and --min_steps must be 0 (no limit) or a step.")
    path = average_checkpoints(
        model_dir,
        output_dir,
        args.n,
        args.model,
        max_step=args.max_step or None,
        min_steps=args.min_steps,
    )
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return cli.run(
        "t2t-avg-all",
        run,
        parser,
        argv,
        uses_registry=True,
        check_flags=lambda args: t2t_flags.check_t2t_flags(parser, args),
    )


if __name__ == "__main__":
    sys.exit(main())
