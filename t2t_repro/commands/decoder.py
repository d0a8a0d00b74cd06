"""t2t-decoder: translate with a trained model (beam search or greedy), as tensor2tensor's.

    t2t-decoder --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \\
        --decode_from_file=src.en --decode_to_file=out.de \\
        --decode_hparams="beam_size=4,alpha=0.6,extra_length=50"
    t2t-decoder ... --decode_interactive
    t2t-decoder ... --checkpoint_path=RUN1/avg,RUN2/avg   (an ensemble of two runs)
    t2t-decoder ... (no file: decodes the problem's dev split, or test with --eval_use_test_set)
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro import fileio
from t2t_repro.commands import cli, t2t_flags


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
    parser.add_argument(
        "--decode_to_file",
        default="",
        help="where the translations go; decoding a split (no --decode_from_file), T2T's "
        "<decode_to_file>.<model>.<hparams_set>.<problem>.beam<k>.alpha<a>.decodes with "
        ".targets and .inputs beside it (default: decode_<split>.txt in --output_dir)",
    )
    parser.add_argument(
        "--decode_reference",
        default="",
        help="references of the decoded lines: print T2T's BLEU of the decodes against them",
    )
    cli.add_bool(parser, "decode_interactive", "translate stdin lines")
    cli.add_bool(
        parser, "eval_use_test_set", "without --decode_from_file: decode the test split, not dev"
    )
    group = parser.add_argument_group("T2T flags about the run")
    group.add_argument("--random_seed", type=int, default=None, help="seeds TensorFlow's RNGs")
    cli.add_bool(
        group,
        "xla_compile",
        "XLA-compile the search (= --decode_hparams=use_xla=True; same ids)",
    )
    cli.add_bool(
        group,
        "keep_timestamp",
        "give --decode_to_file the modification time of the checkpoint's .index file",
    )
    cli.add_bool(
        group,
        "disable_grappler_optimizations",
        "turn off TensorFlow's graph optimizer (Grappler)",
    )
    for name in ("inter_op_parallelism_threads", "intra_op_parallelism_threads"):
        group.add_argument(f"--{name}", type=int, default=0, help="TensorFlow's (0: its choice)")
    cli.add_bool(group, "log_device_placement", "log the device of every op")
    t2t_flags.add_t2t_flags(parser, "t2t-decoder")
    return parser


def _setup_runtime(args: argparse.Namespace) -> None:
    """T2T's session flags and seed, before TensorFlow runs anything."""
    import tensorflow as tf

    from t2t_repro.training.run_setup import setup_runtime

    setup_runtime(
        args.inter_op_parallelism_threads,
        args.intra_op_parallelism_threads,
        args.log_device_placement,
    )
    if args.disable_grappler_optimizations:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    if args.random_seed is not None:
        import keras

        keras.utils.set_random_seed(args.random_seed)


def _keep_timestamp(checkpoint: str, path: str) -> None:
    """T2T's --keep_timestamp: the output gets the checkpoint's .index mtime."""
    if "," in checkpoint or "://" in path or "://" in checkpoint:
        raise cli.UsageError(
            "--keep_timestamp takes one checkpoint and local files (not an ensemble or a URL)."
        )
    mtime = os.path.getmtime(checkpoint + ".index")
    os.utime(path, (mtime, mtime))


def run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding import runner

    if args.decode_from_file and args.decode_to_file:
        runner.check_decode_paths(
            cli.expand(args.decode_from_file), cli.expand(args.decode_to_file)
        )
    if args.decode_reference and not fileio.isfile(cli.expand(args.decode_reference)):
        raise FileNotFoundError(f"--decode_reference: {args.decode_reference!r} does not exist.")
    if args.xla_compile:
        args.decode_hparams = ",".join(filter(None, ("use_xla=True", args.decode_hparams)))
    _setup_runtime(args)
    setup = cli.load_decoder_from_flags(args, allow_ensemble=True)
    print(f"restored {setup.checkpoint}", file=sys.stderr)
    out = ""
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
        names = (args.model, args.hparams_set, args.problem)
        to_file = cli.expand(args.decode_to_file) if args.decode_to_file else ""
        paths = runner.split_paths(out_dir, split, to_file, names, setup.dhp)
        runner.decode_split(setup.decoder, setup.problem, cli.expand(args.tmp_dir), split, paths)
        out = paths.decodes
        also = f", sources: {paths.inputs}" if paths.inputs else ""
        print(f"wrote {out} (references: {paths.targets}{also})", file=sys.stderr)
    if args.decode_reference and out:
        print(runner.reference_bleu(cli.expand(out), cli.expand(args.decode_reference)))
    if args.keep_timestamp and out:
        _keep_timestamp(setup.checkpoint, cli.expand(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return cli.run(
        "t2t-decoder",
        run,
        parser,
        argv,
        uses_registry=True,
        check_flags=lambda args: _check_flags(parser, args),
    )


def _check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    t2t_flags.check_t2t_flags(parser, args)
    if args.decode_reference and args.decode_interactive:
        raise cli.UsageError("--decode_reference scores decodes written to a file, not stdin's.")
    if args.keep_timestamp and args.decode_interactive:
        raise cli.UsageError(
            "--keep_timestamp dates a decodes file; --decode_interactive writes none."
        )


if __name__ == "__main__":
    sys.exit(main())
