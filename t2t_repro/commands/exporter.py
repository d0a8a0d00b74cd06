"""t2t-exporter: write a SavedModel that translates raw strings (tokenisation in the graph).

    t2t-exporter --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \
        [--checkpoint_path=TRAIN/avg] [--decode_hparams="beam_size=4,alpha=0.6"] \
        [--export_dir=BASE]   # the SavedModel goes to BASE/<unix time> (T2T's layout)

Serve or load it with TensorFlow and tensorflow-text only:
    m = tf.saved_model.load(DIR); m.signatures["serving_default"](sources=tf.constant([...]))
Signatures: serving_default (the best translation and its score; with return_beams=True every
beam, as T2T's export) and nbest (every beam, [B, beam_size], as t2t-decoder's
return_beams). Before the export is put in place, both are checked against t2t-decoder on a
few probe lines (docs/serving.md). A text classifier's export (--model=transformer_encoder)
returns each source's label instead: its name, log-probability, id and the class
probabilities (docs/classification.md).

--export_format=ctranslate2 writes a CTranslate2 model directory instead (default
<output_dir>/export/ctranslate2-<unix time>), optionally int8 (--ct2_quantization=int8);
decode it with t2t-decoder --engine=ctranslate2 --ct2_model_dir=DIR (docs/ctranslate2.md).
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli, t2t_flags
from t2t_repro.errors import UsageError
from t2t_repro.hparam import override_names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-exporter", description=__doc__.split("\n\n")[0]
    )
    cli.add_problem_flags(
        parser, "the training output dir (checkpoints and hparams.json)", reads_raw_data=False
    )
    parser.add_argument(
        "--checkpoint_path",
        default="",
        help="a checkpoint prefix or directory (default: the latest in --output_dir)",
    )
    parser.add_argument(
        "--decode_hparams",
        default="",
        help='search settings baked into the export, e.g. "beam_size=4,alpha=0.6,extra_length=50"',
    )
    parser.add_argument(
        "--export_dir",
        default="",
        help="T2T's: the SavedModel goes to EXPORT_DIR/<unix time> (default: <the checkpoint's "
        "dir>/export, i.e. of --checkpoint_path when given, else --output_dir); with "
        "--export_format=ctranslate2, the model directory itself",
    )
    cli.add_random_seed_flag(parser)
    parser.add_argument(
        "--export_format",
        default="saved_model",
        choices=("saved_model", "ctranslate2"),
        help="saved_model: TensorFlow, tokenisation in the graph; ctranslate2: a CTranslate2 "
        "model directory (ids in, ids out; t2t-decoder --engine=ctranslate2 decodes it)",
    )
    parser.add_argument(
        "--ct2_quantization",
        default="float32",
        help="ctranslate2 only: weight type, float32 (exact), int8, int8_float32 or int16",
    )
    parser.add_argument(
        "--ct2_max_positions",
        type=int,
        default=2048,
        help="ctranslate2 only: rows of the position tables (the longest input, and the "
        "longest input plus extra_length, must fit)",
    )
    cli.add_bool(
        parser,
        "as_text",
        "T2T's: the SavedModel's graph as saved_model.pbtxt, text (T2T's default); "
        "--noas_text: saved_model.pb, binary",
        default=True,
    )
    t2t_flags.add_t2t_flags(parser, "t2t-exporter")
    return parser


def check_flags(args: argparse.Namespace) -> None:
    if args.export_format == "ctranslate2":
        # a CTranslate2 model holds no search and no graph: these would be ignored
        off_default = {"--noas_text": not args.as_text, "--random_seed": args.random_seed}
        given = [flag for flag, value in off_default.items() if value not in (False, None)]
        searched = [n for n in override_names(args.decode_hparams) if n != "precision"]
        if given or searched:
            raise UsageError(
                f"{', '.join(given + [f'--decode_hparams {n}' for n in searched])}: a CTranslate2 "
                "model holds no search settings or graph; give the search to t2t-decoder "
                "--engine=ctranslate2 (--decode_hparams), or export --export_format=saved_model."
            )
        from t2t_repro.serving.ctranslate2_export import QUANTIZATIONS

        if args.ct2_quantization not in QUANTIZATIONS:
            raise UsageError(
                f"--ct2_quantization={args.ct2_quantization!r} must be one of "
                f"{', '.join(QUANTIZATIONS)}."
            )
        if args.ct2_max_positions < 1:
            raise UsageError("--ct2_max_positions must be at least 1.")
    elif args.ct2_quantization != "float32" or args.ct2_max_positions != 2048:
        raise UsageError(
            "--ct2_quantization and --ct2_max_positions need --export_format=ctranslate2."
        )


def export_ctranslate2_from_flags(args: argparse.Namespace, setup) -> str:
    from t2t_repro.serving.ctranslate2_export import default_ctranslate2_dir, export_ctranslate2

    export_dir = (
        cli.expand(args.export_dir)
        if args.export_dir
        else default_ctranslate2_dir(
            cli.expand(args.output_dir or os.path.dirname(setup.checkpoint))
        )
    )
    metadata = dict(problem=args.problem, checkpoint=setup.checkpoint)
    return export_ctranslate2(
        setup.model, export_dir, args.ct2_quantization, metadata, args.ct2_max_positions
    )


def run(args: argparse.Namespace) -> int:
    from t2t_repro.decoding import t2t_decode_names
    from t2t_repro.serving.export_check import check_export
    from t2t_repro.serving.exporter import (
        check_no_gumbel_noise,
        export_input_ids,
        export_saved_model,
        t2t_input_cut,
        versioned_export_dir,
    )

    setup = cli.load_decoder_from_flags(args)
    t2t_decode_names.check_mode(setup.dhp, t2t_decode_names.EXPORT)
    setup.problem.check_export()
    check_no_gumbel_noise(setup.model.hparams)
    print(f"restored {setup.checkpoint}", file=sys.stderr)
    if args.export_format == "ctranslate2":
        export_dir = export_ctranslate2_from_flags(args, setup)
        print(f"exported {export_dir}", file=sys.stderr)
        return 0
    decoder = setup.decoder
    # T2T's export.py, main: --export_dir, else <the checkpoint's dir>/export (the dir of
    # --checkpoint_path when given, else --output_dir), a version dir of its time below it
    # a trailing slash names the same directory (rstrip, not normpath: ram:// and gs:// keep
    # their double slash)
    checkpoint_dir = os.path.dirname(args.checkpoint_path.rstrip("/"))
    base = args.export_dir or os.path.join(checkpoint_dir or args.output_dir, "export")
    export_dir = versioned_export_dir(cli.expand(base))
    if decoder.searcher.config.num_samples > 1:
        print(
            f"warning: num_samples={decoder.searcher.config.num_samples}: serving_default "
            "returns the first sample of each source.",
            file=sys.stderr,
        )
    encoders = {"inputs": decoder.input_encoder, "targets": decoder.target_encoder}
    # T2T's export reads inputs as its dataset decode does (serving_input_fn): not cut to
    # max_input_size, but to max_input_seq_length (exporter.t2t_input_cut); a prompt as the
    # decoder reads it
    limit, input_ids = decoder.max_input_length, None
    if not decoder.prompt:
        limit, cut = decoder.split_input_length, t2t_input_cut(setup.model)

        def input_ids(line: str) -> list[int]:
            return export_input_ids(decoder.input_encoder, line, limit, cut)

    export_saved_model(
        setup.model,
        encoders,
        decoder.searcher.config,
        limit,
        export_dir,
        decoder.constraint,
        check=lambda saved_model_dir: check_export(saved_model_dir, decoder, input_ids=input_ids),
        as_text=args.as_text,
    )
    print(f"exported {export_dir} (checked against t2t-decoder)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()

    def check_all_flags(args: argparse.Namespace) -> None:
        t2t_flags.check_t2t_flags(parser, args)
        check_flags(args)

    return cli.run(
        "t2t-exporter", run, parser, argv, uses_registry=True, check_flags=check_all_flags
    )


if __name__ == "__main__":
    sys.exit(main())
