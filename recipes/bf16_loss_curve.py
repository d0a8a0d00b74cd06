#!/usr/bin/env python3
"""Does bf16 training follow fp32's loss curve? Short real runs, same data, same seed.

    .venv/bin/python -m recipes.bf16_loss_curve --data_dir=DATA --work_dir=out/bf16_curve \
        --out bench/results/bf16_loss_curve_multi30k.json

Trains --hparams_set on --problem three times with the real trainer CLI (one process each,
since the precision policy is process-wide): float32 seed 1, bfloat16 seed 1, and float32
seed 2, whose distance from the first is the noise that bf16's distance is compared with.
A run whose directory already holds its final checkpoint is not trained again. Reads the
``loss`` events (the mean over each log interval) and reports the curves and, per interval,
|bf16 - fp32| beside |fp32 seed 2 - fp32 seed 1|.
"""

import argparse
import os
import subprocess
import sys

from bench.report import emit, event_scalars

RUNS = (("float32", "", 1), ("bfloat16", "bfloat16", 1), ("float32_seed2", "", 2))


def train(args, name: str, precision: str, seed: int) -> str:
    output_dir = os.path.join(args.work_dir, name)
    flags = [
        f"--problem={args.problem}",
        f"--data_dir={args.data_dir}",
        f"--output_dir={output_dir}",
        f"--hparams_set={args.hparams_set}",
        f"--hparams={args.hparams}",
        f"--train_steps={args.train_steps}",
        "--schedule=train",
        f"--random_seed={seed}",
        f"--log_step_count_steps={args.log_every}",
        f"--steps_per_loop={args.log_every}",
        "--eval_decode_examples=0",
        f"--mixed_precision={precision}",
    ]
    code = "import sys; from t2t_repro.commands.trainer import main; sys.exit(main(sys.argv[1:]))"
    subprocess.run([sys.executable, "-c", code, *flags], check=True)
    return output_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="translate_ende_multi30k")
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--work_dir", required=True)
    parser.add_argument("--hparams_set", default="transformer_multi30k_cpu")
    parser.add_argument("--hparams", default="batch_size=1024")
    parser.add_argument("--train_steps", type=int, default=300)
    parser.add_argument("--log_every", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    curves = {}
    for name, precision, seed in RUNS:
        output_dir = train(args, name, precision, seed)
        curves[name] = {step: value for _, step, value in event_scalars(output_dir, "loss")}
    steps = sorted(set.intersection(*(set(c) for c in curves.values())))
    base = curves["float32"]
    bf16_gap = [abs(curves["bfloat16"][s] - base[s]) for s in steps]
    seed_gap = [abs(curves["float32_seed2"][s] - base[s]) for s in steps]
    report = {
        "problem": args.problem,
        "hparams_set": args.hparams_set,
        "hparams": args.hparams,
        "steps": steps,
        "loss": {name: [curves[name][s] for s in steps] for name in curves},
        "abs_gap_bf16_vs_fp32": bf16_gap,
        "abs_gap_fp32_seed2_vs_seed1": seed_gap,
        "max_gap_bf16_vs_fp32": max(bf16_gap),
        "max_gap_fp32_seed2_vs_seed1": max(seed_gap),
        "load_average_end": os.getloadavg(),
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
