"""t2t-avg-all: average the model weights of the last n checkpoints of a training run.

    t2t-avg-all --model_dir=TRAIN --output_dir=TRAIN/avg --n=5     # T2T's: one per step
    t2t-avg-all --model_dir=TRAIN --output_dir=TRAIN/avg --n=5 --wait_minutes=30  # following it
    t2t-avg-all --model_dir=TRAIN --output_dir=TRAIN/avg --n=20 --nosliding_window  # the newest

The result is a checkpoint the decoder loads: t2t-decoder --checkpoint_path=TRAIN/avg ...

As T2T's t2t-avg-all (``bin/t2t_avg_all.py``), it writes a sliding window: for every checkpoint
from the n-th on, the average of it and the n-1 before it (<output_dir>/ckpt-<its step>), for
t2t-translate-all and t2t-bleu --translations_dir to plot; the last window is the newest n
checkpoints' average. With fewer than n checkpoints it writes none, as T2T's. Its output_dir
is T2T's, avg/ (in the working directory), unless given, and it copies the run's flags.txt
there, dated as it is, as T2T's does. Beyond T2T, --nosliding_window writes the newest
window alone, also from fewer than n checkpoints, and --max_step picks the window that ends
at a step (the checkpoints around the best dev score, say).
"""

from __future__ import annotations

import argparse
import sys

from t2t_repro.commands import cli, t2t_flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-avg-all", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--model_dir", default="", help="a t2t-trainer output_dir")
    parser.add_argument(
        "--output_dir", default="avg/", help="where the averages go (T2T's default: avg/)"
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
        help="not T2T: one average, of the newest n at or before this step (0: the newest "
        "n), e.g. the checkpoints around the best dev score",
    )
    cli.add_bool(
        parser,
        "sliding_window",
        "not a T2T flag: T2T's behaviour, the default, one average of the last n at every "
        "checkpoint step from the n-th on; --nosliding_window: the newest n's alone",
        default=None,
    )
    parser.add_argument(
        "--min_steps", type=int, default=0, help="ignore checkpoints with fewer steps (T2T's)"
    )
    parser.add_argument(
        "--wait_minutes",
        type=float,
        default=0,
        help="wait up to N minutes for a new checkpoint, following a running job (T2T's)",
    )
    parser.add_argument(
        "--model",
        default="",
        help="not a T2T flag (T2T averages tensors by name): the run's model, read from its "
        "flags.txt when not given (else transformer)",
    )
    t2t_flags.add_t2t_flags(parser, "t2t-avg-all")
    return parser


def check_avg_flags(args: argparse.Namespace) -> None:
    if args.n < 1:
        raise cli.UsageError("--n must be at least 1.")
    if args.max_step < 0:
        raise cli.UsageError("--max_step must be 0 (the newest checkpoints) or a step.")
    if args.min_steps < 0 or args.wait_minutes < 0:
        raise cli.UsageError("--min_steps and --wait_minutes must be 0 or more.")
    follows = args.min_steps or args.wait_minutes  # T2T's, of the sliding window
    if (args.sliding_window or follows) and args.max_step:
        raise cli.UsageError(
            "--max_step picks one average; the sliding window (--sliding_window, --min_steps, "
            "--wait_minutes) writes one per step: use one or the other."
        )
    if follows and args.sliding_window is False:
        raise cli.UsageError(
            "--min_steps and --wait_minutes are the sliding window's (T2T's): drop "
            "--nosliding_window."
        )
    if args.sliding_window is None:
        args.sliding_window = not args.max_step


def run(args: argparse.Namespace) -> int:
    from t2t_repro.checkpoints.averaging import average_checkpoints, average_sliding_windows
    from t2t_repro.training.output_dir import read_flags

    cli.require(args, "model_dir")
    model_dir = cli.expand(args.model_dir)
    output_dir = cli.expand(args.output_dir)
    # the run's own model (a classifier's transformer_encoder), as T2T needs none
    args.model = args.model or read_flags(model_dir).get("model", "transformer")
    if args.sliding_window:
        written = average_sliding_windows(
            model_dir,
            output_dir,
            args.n,
            args.model,
            min_steps=args.min_steps,
            wait_minutes=args.wait_minutes,
        )
        print(f"wrote {len(written)} average(s) in {output_dir}")
        return 0
    path, written = average_checkpoints(
        model_dir, output_dir, args.n, args.model, max_step=args.max_step or None
    )
    print(f"{'wrote' if written else 'kept'} {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()

    def check_flags(args: argparse.Namespace) -> None:
        t2t_flags.check_t2t_flags(parser, args)
        check_avg_flags(args)

    return cli.run("t2t-avg-all", run, parser, argv, uses_registry=True, check_flags=check_flags)


if __name__ == "__main__":
    sys.exit(main())
