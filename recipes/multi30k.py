#!/usr/bin/env python3
"""Multi30k recipe: datagen, train (time-boxed), average, decode test_2016_flickr, BLEU.

    .venv/bin/python -m recipes.multi30k --pair=ende --minutes=60
    .venv/bin/python -m recipes.multi30k --pair=enfr --minutes=60

Runs the real CLIs (t2t_repro.workflow) and writes results.json and results.md (BLEU,
training time, steps, tokens/s, hparams set, and the curve of dev BLEU against training time
from the trainer's ``eval/bleu`` events: real beam-search decodes of 64 val sentences at each
eval) in --work_dir. The test set is decoded once, at the end.
"""

import argparse
import json
import os
import sys

from bench.report import (
    MULTI30K,
    event_scalars,
    first_event_time,
    training_stats,
    write_text_atomically,
)
from t2t_repro.workflow import WorkflowConfig, run_workflow

SHARED = MULTI30K


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", choices=["ende", "enfr"], default="ende")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--train_steps", type=int, default=100000)
    parser.add_argument("--hparams_set", default="transformer_multi30k_cpu")
    parser.add_argument("--work_dir", default="")
    parser.add_argument("--tmp_dir", default=SHARED)
    args = parser.parse_args()
    work_dir = os.path.abspath(args.work_dir or f"out/multi30k_{args.pair}")
    cfg = WorkflowConfig(
        problem=f"translate_{args.pair}_multi30k",
        hparams_set=args.hparams_set,
        work_dir=work_dir,
        tmp_dir=os.path.abspath(args.tmp_dir),
        train_steps=args.train_steps,
        average_n=5,
        extra_trainer_flags=[
            f"--max_train_seconds={args.minutes * 60}",
            "--local_eval_frequency=200",
            "--keep_checkpoint_max=30",
        ],
    )
    summary = run_workflow(cfg)
    bleu = {r["name"]: r["score"] for r in summary["bleu"]}
    stats = training_stats(cfg.train_dir)
    start = first_event_time(cfg.train_dir) or 0.0
    curve = [
        {"step": step, "training_minutes": (wall - start) / 60, "dev_bleu": value}
        for wall, step, value in event_scalars(os.path.join(cfg.train_dir, "eval"), "bleu")
    ]
    row = {
        "problem": cfg.problem,
        "hparams_set": cfg.hparams_set,
        "sacreBLEU 13a cased": bleu["sacreBLEU 13a cased"],
        "training_minutes": summary["timings"]["train_s"] / 60,
        **stats,
    }
    summary.update(results=row, dev_bleu_curve=curve)
    write_text_atomically(os.path.join(work_dir, "results.json"), json.dumps(summary, indent=2))
    table = (
        "| "
        + " | ".join(row)
        + " |\n|"
        + "---|" * len(row)
        + "\n| "
        + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row.values())
        + " |\n"
    )
    table += (
        "\nDev BLEU (sacreBLEU 13a cased, first 64 val sentences, beam 4) during training:\n\n"
        "| step | training min | dev BLEU |\n|---|---|---|\n"
        + "".join(
            f"| {p['step']} | {p['training_minutes']:.1f} | {p['dev_bleu']:.2f} |\n" for p in curve
        )
    )
    write_text_atomically(os.path.join(work_dir, "results.md"), table)
    print(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
