"""t2t-exporter: write a SavedModel that translates raw strings (tokenisation in the graph).

    t2t-exporter --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \
        [--checkpoint_path=TRAIN/avg] [--decode_hparams="beam_size=4,alpha=0.6"] \
        [--export_dir=TRAIN/export/<time>]

Serve or load it with TensorFlow and tensorflow-text only:
    m = tf.saved_model.load(DIR); m.signatures["serving_default"](sources=tf.constant([...]))
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t2t-exporter", description=__doc__.split("\n\n")[0])
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
        help="where the SavedModel goes (default: <output_dir>/export/<unix time>); must not exist",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.serving.exporter import default_export_dir, export_saved_model

    setup = cli.load_decoder_from_flags(args)
    print(f"restored {setup.checkpoint}", file=sys.stderr)
    decoder = setup.decoder
    export_dir = (
        cli.expand(args.export_dir)
        if args.export_dir
        else default_export_dir(
            cli.expand(args.output_dir or os.path.dirname(args.checkpoint_path))
        )
    )
    encoders = {"inputs": decoder.input_encoder, "targets": decoder.target_encoder}
    export_saved_model(
        setup.model,
        encoders,
        decoder.searcher.config,
        decoder.max_input_length,
        export_dir,
        decoder.constraint,
    )
    print(f"exported {export_dir}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-exporter", run, build_parser(), argv, uses_registry=True)


if __name__ == "__main__":
    sys.exit(main())
