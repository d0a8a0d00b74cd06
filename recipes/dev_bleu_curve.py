#!/usr/bin/env python3
"""Dev BLEU against training time, from the checkpoints a training run kept.

    .venv/bin/python -m recipes.dev_bleu_curve --problem=translate_ende_multi30k \
        --data_dir=out/multi30k_ende/data --output_dir=out/multi30k_ende/train --examples=300

For a run made before the trainer logged ``eval/bleu`` (or to score more dev sentences than it
did): each ``ckpt-<step>`` in --output_dir is restored into one model and the first --examples
dev examples are beam-searched (beam 4, alpha 0.6, +50 unless --decode_hparams says otherwise)
and scored with sacreBLEU 13a cased, the trainer's own dev-BLEU code. The training time of a
checkpoint is the wall time of the trainer's step-``loss`` event at that step (or before it)
minus the trainer's first event's. Only dev data is used. Writes JSON (``--out``) and prints a
table.
"""

import argparse
import os
import sys
import time

from bench.report import checkpoints, emit, training_minutes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--output_dir", required=True, help="the training directory")
    parser.add_argument("--hparams_set", default="", help="only if output_dir has no hparams.json")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument(
        "--decode_hparams", default="beam_size=4,alpha=0.6,extra_length=50,batch_size=32"
    )
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    from t2t_repro.checkpoints.loading import load_trained_model, restore_model
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.training.loop.dev_decodes import make_dev_decodes

    register_builtins()

    found = checkpoints(args.output_dir)
    if not found:
        sys.exit(
            f"error: no ckpt-<step>.index files in {args.output_dir}; pass a training output_dir."
        )
    trained = load_trained_model(
        args.output_dir,
        checkpoint_path=found[0][1],
        problem_name=args.problem,
        data_dir=args.data_dir,
        hparams_set=args.hparams_set,
    )
    model = trained.model
    dev_bleu = make_dev_decodes(
        model, trained.problem, args.data_dir, trained.hparams, args.examples, args.decode_hparams
    )
    minutes = training_minutes(args.output_dir, [step for step, _ in found])
    curve = []
    for (step, prefix), minute in zip(found, minutes, strict=True):
        restore_model(model, prefix)
        start = time.time()
        bleu = dev_bleu()["bleu"]
        curve.append({"step": step, "training_minutes": minute, "dev_bleu": bleu})
        print(
            f"step {step:6d}  {minute if minute is not None else float('nan'):6.1f} min  "
            f"dev BLEU {bleu:6.2f}  ({time.time() - start:.0f}s to decode)",
            file=sys.stderr,
        )
    emit(
        {
            "problem": args.problem,
            "output_dir": os.path.abspath(args.output_dir),
            "dev_examples": len(dev_bleu.metric),
            "decode_hparams": args.decode_hparams,
            "bleu": "sacreBLEU 13a cased",
            "curve": curve,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
