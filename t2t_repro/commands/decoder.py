"""t2t-decoder: translate with a trained model (beam search or greedy), as tensor2tensor's.

    t2t-decoder --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \\
        --decode_from_file=src.en --decode_to_file=out.de \\
        --decode_hparams="beam_size=4,alpha=0.6,extra_length=50"
    t2t-decoder ... --decode_interactive
    t2t-decoder ... --checkpoint_path=RUN1/avg,RUN2/avg   (an ensemble of two runs)
    t2t-decoder ... (no file: decodes the problem's dev split, or test with --eval_use_test_set)
    t2t-decoder ... --decode_from_file=src.en --decode_to_file=out.de --decode_shards=4 \\
        --worker_id=0    (one of 4 processes: writes out.de000, its quarter; cat out.de0*)
    t2t-decoder ... --hparams=sampling_method=random,sampling_temp=0.8 \\
        --decode_hparams=beam_size=1,num_samples=5 --random_seed=1   (5 samples per line)
    t2t-decoder ... --score_file=pairs.tsv --decode_to_file=scores.txt   (source<TAB>target)
    t2t-decoder --problem=... --data_dir=DATA --engine=ctranslate2 --ct2_model_dir=EXPORT ...
        (the search in CTranslate2, on a t2t-exporter --export_format=ctranslate2 model)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.commands import cli, t2t_flags
from t2t_repro.errors import UsageError
from t2t_repro.paths import expect_file_destination


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-decoder", description=__doc__.split("\n\n")[0]
    )
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
        "--hparams=sampling_method=random; decoding a split: only its first N examples, as "
        "T2T); delimiter: ends each input and output record "
        "(default \\n)",
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
    cli.add_bool(
        parser, "eval_use_test_set", "without --decode_from_file: decode the test split, not dev"
    )
    parser.add_argument(
        "--decode_shards",
        type=int,
        default=1,
        help="number of processes sharing --decode_from_file (T2T's); each writes its "
        "share's decodes to the output name + its --worker_id in three digits",
    )
    parser.add_argument(
        "--worker_id", type=int, default=0, help="this process's share, 0..decode_shards-1"
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
    group = parser.add_argument_group("T2T flags about the run")
    cli.add_random_seed_flag(group)
    cli.add_bool(
        group,
        "xla_compile",
        "T2T's: no effect, as in T2T 1.15 off TPU (--decode_hparams=use_xla=True compiles the "
        "search here)",
    )
    cli.add_bool(
        group,
        "keep_timestamp",
        "date the --decode_from_file output like the checkpoint's .index file (T2T's)",
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


def check_flags(args: argparse.Namespace) -> None:
    if args.decode_shards < 1 or not 0 <= args.worker_id < args.decode_shards:
        raise cli.UsageError(
            f"--worker_id={args.worker_id} must be in 0..{args.decode_shards - 1} and "
            "--decode_shards at least 1."
        )
    only_file = [
        flag
        for flag, on in (
            ("--keep_timestamp", args.keep_timestamp),
            ("--decode_shards", args.decode_shards > 1),
        )
        if on
    ]
    if only_file and (not args.decode_from_file or args.decode_interactive):
        verb = "applies" if len(only_file) == 1 else "apply"
        raise cli.UsageError(f"{' and '.join(only_file)} {verb} to --decode_from_file only.")
    if args.keep_timestamp and fileio.is_url(args.decode_to_file or args.decode_from_file):
        raise cli.UsageError(
            "--keep_timestamp: the time of a file on object storage cannot be set; "
            "decode to a local file."
        )
    if args.decode_reference and (
        args.decode_interactive or args.score_file or args.decode_shards > 1
    ):
        raise cli.UsageError(
            "--decode_reference scores the whole decodes file of --decode_from_file or a split: "
            "not stdin's, scores, or one --decode_shards share (t2t-bleu the joined output)."
        )
    if args.score_file:
        if not args.decode_to_file:
            raise cli.UsageError("--score_file needs --decode_to_file (where the scores go).")
        if args.engine != "tensorflow":
            raise cli.UsageError(
                "--score_file scores with the trained checkpoint (--engine=tensorflow, "
                "--output_dir or --checkpoint_path); drop --engine=ctranslate2."
            )
        if args.decode_from_file or args.decode_interactive:
            raise cli.UsageError(
                "--score_file scores pairs; it does not decode: drop --decode_from_file and "
                "--decode_interactive."
            )


@contextlib.contextmanager
def _runtime(args: argparse.Namespace) -> Iterator[None]:
    """T2T's session flags, before TensorFlow runs anything (--random_seed seeds sampling:
    ``runner.load_decoder``). Grappler's switch is the process's: it is put back as it was
    when the run ends, so a ``main(argv)`` call leaves the caller's graphs optimised."""
    import tensorflow as tf

    from t2t_repro.training.run_setup import setup_runtime

    setup_runtime(
        args.inter_op_parallelism_threads,
        args.intra_op_parallelism_threads,
        args.log_device_placement,
    )
    options = tf.config.optimizer
    before = options.get_experimental_options().get("disable_meta_optimizer", False)
    if args.disable_grappler_optimizations:
        options.set_experimental_options({"disable_meta_optimizer": True})
    try:
        yield
    finally:
        options.set_experimental_options({"disable_meta_optimizer": before})


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
        hparams_overrides=args.hparams,
        random_seed=args.random_seed,
    )


def run(args: argparse.Namespace) -> int:
    with _runtime(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding import decode_hooks, runner, shards, split_decoding

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

    share = names = None
    if args.decode_shards > 1:  # read first: a missing file costs no model load
        names, delimiter = shard_names(args)
        share = shards.worker_lines(cli.expand(args.decode_from_file), names, delimiter)
    elif args.decode_from_file and args.decode_to_file:
        runner.check_decode_paths(
            cli.expand(args.decode_from_file), cli.expand(args.decode_to_file)
        )
    if args.decode_reference and not fileio.isfile(cli.expand(args.decode_reference)):
        raise FileNotFoundError(f"--decode_reference: {args.decode_reference!r} does not exist.")
    if args.xla_compile:
        note = "--decode_hparams=use_xla=True compiles the search here."
        print(t2t_flags.xla_compile_note(note), file=sys.stderr)
    max_examples = -1
    if not (args.decode_interactive or args.decode_from_file):
        args.decode_hparams, max_examples = split_decoding.split_example_cap(args.decode_hparams)
    setup = load_setup(args)
    print(f"restored {setup.checkpoint}", file=sys.stderr)
    out = ""
    if args.decode_interactive:
        runner.decode_interactive(setup)
    elif args.decode_from_file:
        out = decode_from_file(args, setup, share, names)
        print(f"wrote {out}", file=sys.stderr)
    else:
        split = "test" if args.eval_use_test_set else "dev"
        out_dir = model_dir(args)
        names = (args.model, args.hparams_set, args.problem)
        to_file = cli.expand(args.decode_to_file) if args.decode_to_file else ""
        paths = split_decoding.split_paths(out_dir, split, to_file, names, setup.dhp)
        written = split_decoding.decode_split(
            setup.decoder, setup.problem, cli.expand(args.tmp_dir), split, paths, max_examples
        )
        if written is None:
            no_bleu = "; no BLEU for --decode_reference" if args.decode_reference else ""
            print(split_decoding.nothing_written(setup.dhp) + no_bleu, file=sys.stderr)
        else:
            out = paths.decodes
            also = f", sources: {paths.inputs}" if paths.inputs else ""
            print(f"wrote {out} (references: {paths.targets}{also})", file=sys.stderr)
    if args.decode_reference and out:
        # T2T's hook: its event under the model dir, named by the split decoded (none: a file)
        split = "test" if args.eval_use_test_set and not args.decode_from_file else None
        reference = cli.expand(args.decode_reference)
        line = decode_hooks.log_reference_bleu(
            cli.expand(out), reference, model_dir(args), setup.dhp, split
        )
        print(line)
    return 0


def model_dir(args: argparse.Namespace) -> str:
    """T2T's model dir: --output_dir, else the (first) checkpoint's directory."""
    first_checkpoint = args.checkpoint_path.split(",")[0] or args.ct2_model_dir
    return cli.expand(args.output_dir or os.path.dirname(first_checkpoint))


def shard_names(args: argparse.Namespace) -> tuple:
    """This worker's ``shards.ShardNames``, from the flags and the decode hparams
    ``shards_start_offset`` and ``shard_google_format``, and the records' ``delimiter`` (read
    before the model loads)."""
    from t2t_repro import registry
    from t2t_repro.decoding import shards
    from t2t_repro.decoding.line_decoder import decode_hparams

    defaults = getattr(registry.problem(args.problem), "decode_defaults", None)
    dhp = decode_hparams(args.decode_hparams, defaults)
    names = shards.ShardNames(
        args.decode_shards, args.worker_id, dhp.shards_start_offset, dhp.shard_google_format
    )
    return names, dhp.delimiter


def decode_from_file(args: argparse.Namespace, setup, share: tuple | None, names=None) -> str:
    """Decodes the file (or this worker's ``share`` of it: ``shards.worker_lines``, named
    by ``names``) and returns the output's path."""
    from t2t_repro.decoding import runner, shards

    source = args.decode_from_file
    if share is not None:  # T2T: both names get the shard suffix
        # without --decode_to_file, T2T's _decode_filename suffixes the input's shard name again
        default = names.of(names.of(source))
        out = names.of(args.decode_to_file) if args.decode_to_file else ""
        out = cli.expand(
            out
            or runner.default_output_name(
                default, args.model, args.hparams_set, args.problem, setup.dhp
            )
        )
        lines, what = share
        print(f"worker {args.worker_id} of {args.decode_shards}: {what}", file=sys.stderr)
        expect_file_destination(out, "--decode_to_file")
        earlier = ()
        if setup.decoder.samples:  # repeats in the shares before this one count
            earlier = shards.earlier_lines(cli.expand(source), names, setup.dhp.delimiter)
        runner.decode_lines_to_file(setup, lines, out, earlier)
    else:
        out = cli.expand(
            args.decode_to_file
            or runner.default_output_name(
                source, args.model, args.hparams_set, args.problem, setup.dhp
            )
        )
        runner.decode_file(setup, cli.expand(source), out)
    if args.keep_timestamp:  # T2T: os.utime to the checkpoint's .index time
        checkpoints = setup.checkpoint.split(",")
        fileio.set_mtime(out, max(fileio.getmtime(c + ".index") for c in checkpoints))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()

    def check_all_flags(args: argparse.Namespace) -> None:
        t2t_flags.check_t2t_flags(parser, args)
        check_flags(args)

    return cli.run(
        "t2t-decoder", run, parser, argv, uses_registry=True, check_flags=check_all_flags
    )


if __name__ == "__main__":
    sys.exit(main())
