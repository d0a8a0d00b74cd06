"""t2t-attention: PNG heat maps of a checkpoint's attention for one sentence (all heads).

    t2t-attention --problem=translate_ende_multi30k --data_dir=DATA --output_dir=TRAIN \
        --source="A man rides a bike ." [--target="Ein Mann fährt Fahrrad ."] [--layer=-1]

Without --target the model's own translation (beam search) is used; a language model's
--source is its prompt, continued (--target) or decoded, and its one map is decoder
self-attention over both. Writes
encoder_self_layer<k>.png, decoder_self_layer<k>.png and encdec_layer<k>.png to --out_dir
(default: <output_dir>/attention).
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro import fileio
from t2t_repro.commands import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-attention", description=__doc__.split("\n\n")[0]
    )
    cli.add_problem_flags(
        parser, "the training output dir (checkpoints and hparams.json)", reads_raw_data=False
    )
    parser.add_argument(
        "--checkpoint_path",
        default="",
        help="a checkpoint prefix or directory (default: the latest in --output_dir)",
    )
    parser.add_argument("--source", default="", help="the source sentence")
    parser.add_argument("--target", default="", help="the target sentence (default: decode it)")
    parser.add_argument("--layer", type=int, default=-1, help="which layer (-1: the last)")
    parser.add_argument("--decode_hparams", default="", help="search settings when decoding")
    parser.add_argument("--out_dir", default="", help="where the PNGs go")
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.atomic_write import write_bytes_atomically
    from t2t_repro.text_encoding.reserved_tokens import EOS_ID
    from t2t_repro.visualization.attention_maps import attention_pngs, token_labels

    setup = cli.load_decoder_from_flags(args, "source")
    decoder = setup.decoder
    input_ids = decoder.encode(args.source, 0)
    if args.target:
        target_ids = decoder.target_encoder.encode(args.target) + [EOS_ID]
    else:
        best = decoder.decode_ids([input_ids])[0][0]
        print(f"translation: {best.text}", file=sys.stderr)
        target_ids = list(best.ids) + [EOS_ID]
    if decoder.prompt:  # a language model: its targets are the prompt and what follows it
        target_ids = input_ids + target_ids
    try:
        pngs = attention_pngs(
            setup.model,
            input_ids,
            target_ids,
            token_labels(decoder.input_encoder, input_ids),
            token_labels(decoder.target_encoder, target_ids),
            args.layer,
        )
    except ValueError as e:
        raise cli.UsageError(str(e)) from None
    out_dir = (
        cli.expand(args.out_dir)
        if args.out_dir
        else os.path.join(
            cli.expand(args.output_dir or os.path.dirname(args.checkpoint_path)), "attention"
        )
    )
    fileio.makedirs(out_dir)
    for name, png in pngs.items():
        path = os.path.join(out_dir, f"{name}.png")
        write_bytes_atomically(path, png)
        print(f"wrote {path}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-attention", run, build_parser(), argv, uses_registry=True)


if __name__ == "__main__":
    sys.exit(main())
