#!/usr/bin/env python3
"""Dev parse F1 against training time, from the checkpoints a training run kept.

    .venv/bin/python -m recipes.dev_f1_curve --problem=wsj_parsing_ptb_sample \
        --data_dir=out/wsj_parsing/data --output_dir=out/wsj_parsing/train

For a run whose trainer did not log ``eval/parse_f1`` (or to decode otherwise than it did):
each ``ckpt-<step>`` in --output_dir is restored into one model and the dev sentences are
decoded (tree-constrained, greedy unless --decode_hparams says otherwise) and scored with
EVALB's rules by the trainer's own dev-F1 code (``training.loop.dev_decodes``). Only dev data is
used. Writes JSON (``--out``) and prints a table.
"""

import argparse
import os
import sys
import time

from bench.report import checkpoints, emit, training_minutes  # noqa: E402


def dev_f1_curve(
    problem_name: str,
    data_dir: str,
    output_dir: str,
    examples: int = 1000,
    decode_hparams: str = "beam_size=1,batch_size=64",
    hparams_set: str = "transformer_parsing_cpu",
    steps: range | None = None,
) -> list[dict]:
    """``[{step, training_minutes, dev_f1, ...}]`` for every kept checkpoint of ``output_dir``
    (those with a step in ``steps``, if given)."""
    from t2t_repro.checkpoints.loading import load_trained_model, restore_model
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.training.loop.dev_decodes import make_dev_decodes

    register_builtins()

    found = [
        (step, prefix) for step, prefix in checkpoints(output_dir) if steps is None or step in steps
    ]
    if not found:
        raise SystemExit(
            f"error: no ckpt-<step>.index files in {output_dir}; pass a training output_dir."
        )
    trained = load_trained_model(
        output_dir,
        checkpoint_path=found[0][1],
        problem_name=problem_name,
        data_dir=data_dir,
        hparams_set=hparams_set,
    )
    model = trained.model
    dev_f1 = make_dev_decodes(
        model, trained.problem, data_dir, trained.hparams, examples, decode_hparams
    )
    curve = []
    minutes = training_minutes(output_dir, [s for s, _ in found])
    for (step, prefix), minute in zip(found, minutes, strict=True):
        restore_model(model, prefix)
        start = time.time()
        scores = {k.removeprefix("parse_"): v for k, v in dev_f1().items()}
        curve.append({"step": step, "training_minutes": minute, "dev_f1": scores["f1"], **scores})
        print(
            f"step {step:6d}  {minute if minute is not None else float('nan'):6.1f} min  "
            f"dev F1 {scores['f1']:6.2f}  ({time.time() - start:.0f}s to decode)",
            file=sys.stderr,
        )
    return curve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="wsj_parsing_ptb_sample")
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--output_dir", required=True, help="the training directory")
    parser.add_argument("--hparams_set", default="transformer_parsing_cpu")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--decode_hparams", default="beam_size=1,batch_size=64")
    parser.add_argument("--first_step", type=int, default=0)
    parser.add_argument("--last_step", type=int, default=10**9)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    curve = dev_f1_curve(
        args.problem,
        args.data_dir,
        args.output_dir,
        args.examples,
        args.decode_hparams,
        hparams_set=args.hparams_set,
        steps=range(args.first_step, args.last_step + 1),
    )
    emit(
        {
            "problem": args.problem,
            "output_dir": os.path.abspath(args.output_dir),
            "decode_hparams": args.decode_hparams,
            "scoring": "strict EVALB (COLLINS.prm)",
            "curve": curve,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
