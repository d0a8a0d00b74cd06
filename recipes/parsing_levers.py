#!/usr/bin/env python3
"""Parsing levers: short, equal-time trainer runs that each change one thing from the recipe.

    .venv/bin/python -m recipes.parsing_levers --data_dir=out/wsj_parsing/data \
        --work_dir=out/parsing_levers --minutes=14 --out=bench/results/parsing_levers_cpu.json

The recipe (recipes/wsj_parsing.py) trains for an hour; this answers "which knob moves dev F1,
and by how much" in a fraction of it. Every variant trains ``transformer_parsing_cpu_hour``
(``transformer_parsing_cpu`` with the recipe's dropout) plus its own overrides, in bf16, for the
same wall-clock budget, and the trainer's own periodic evaluation logs dev F1 (strict EVALB over
the first 64 dev sentences, greedy, tree-constrained) every 250 steps; at the end the last
checkpoint is decoded greedily on all 127 dev sentences and scored (less noisy than 64).
``half_data`` trains on the first of the two train shards only (1,835 of 3,669 sentences), so
the data-size lever is measured the same way. ``words`` and ``words_slots`` train
``wsj_parsing_ptb_sample_words`` (one source id per word; its data dir is ``--words_data_dir``),
the second with the decoder's ``slot_signal``. A variant whose directory holds a ``done`` marker
is collected, not rerun, so an interrupted sweep resumes. Give the run one core (``taskset -c
0``) if others share the machine, and compare variants only within one sweep. """

import argparse
import glob
import os
import shutil
import sys
import time

from bench.report import (
    decode_and_score,
    emit,
    event_scalars,
    training_minutes,
    training_stats,
    write_text_atomically,
)
from t2t_repro.workflow import run_tool

PROBLEM = "wsj_parsing_ptb_sample"
VARIANTS = {
    "base": "",
    "half_data": "",
    "layers2": "num_hidden_layers=2",
    "batch2048": "batch_size=2048",
    "d384": "hidden_size=384,filter_size=1536,num_heads=6",
    "warmup400": "learning_rate_warmup_steps=400",
    "words": "",
    "words_slots": "slot_signal=True",
}
# Variants on the one-id-per-word source (their data dir: --words_data_dir).
WORDS_PROBLEM = "wsj_parsing_ptb_sample_words"
WORDS_VARIANTS = ("words", "words_slots")


def variant_problem(name: str) -> str:
    return WORDS_PROBLEM if name in WORDS_VARIANTS else PROBLEM


def half_data_dir(data_dir: str, work_dir: str) -> str:
    """A data dir of symlinks with every file but the second train shard."""
    half = os.path.join(work_dir, "data_half")
    os.makedirs(half, exist_ok=True)
    for path in glob.glob(os.path.join(data_dir, "*")):
        name = os.path.basename(path)
        link = os.path.join(half, name)
        if "-train-00001-" not in name and not os.path.lexists(link):
            os.symlink(os.path.abspath(path), link)
    return half


def train_variant(args, name: str, overrides: str, data_dir: str) -> None:
    out = os.path.join(args.work_dir, name)
    shutil.rmtree(out, ignore_errors=True)
    run_tool(
        "t2t-trainer",
        f"--problem={variant_problem(name)}",
        "--hparams_set=transformer_parsing_cpu_hour",
        f"--hparams={overrides}",
        f"--data_dir={data_dir}",
        f"--output_dir={os.path.join(out, 'train')}",
        "--train_steps=1000000",
        f"--max_train_seconds={args.minutes * 60}",
        "--mixed_precision=bfloat16",
        "--no-attention_images",
        "--schedule=train_and_evaluate",  # a dev evaluation every --local_eval_frequency steps
        "--local_eval_frequency=250",
        "--keep_checkpoint_max=2",
    )
    open(os.path.join(out, "done"), "w").close()


def final_dev_f1(args, name: str, train: str) -> dict:
    """The last checkpoint decoded greedily on all 127 dev sentences and scored by t2t-evalb."""
    steps = sorted(
        int(p.rsplit("-", 1)[1].split(".")[0])
        for p in glob.glob(os.path.join(train, "ckpt-*.index"))
    )
    checkpoint = os.path.join(train, f"ckpt-{steps[-1]}")
    scored = decode_and_score(
        variant_problem(name),
        variant_data_dir(args, name),
        train,
        checkpoint,
        "dev",
        "greedy",
        {},
    )
    scores = scored["evalb"]["all"]
    return {
        "step": steps[-1],
        "f1": scores["f1"],
        "tagging_accuracy": scores["tagging_accuracy"],
        "complete_match": scores["complete_match"],
    }


def variant_data_dir(args, name: str) -> str:
    if name in WORDS_VARIANTS:
        if not args.words_data_dir:
            raise SystemExit(f"variant {name} needs --words_data_dir (t2t-datagen {WORDS_PROBLEM})")
        return args.words_data_dir
    return args.data_dir


def collect(args, name: str, overrides: str) -> dict:
    train = os.path.join(args.work_dir, name, "train")
    curve = event_scalars(os.path.join(train, "eval"), "parse_f1")
    losses = event_scalars(os.path.join(train, "eval"), "loss")
    minutes = training_minutes(train, [step for _, step, _ in curve])
    f1s = [value for _, _, value in curve]
    return {
        "variant": name,
        "overrides": overrides or ("(first train shard only)" if name == "half_data" else ""),
        **training_stats(train),
        "dev_f1_curve": [
            {"step": step, "minutes": minute, "dev_f1": value}
            for (_, step, value), minute in zip(curve, minutes, strict=True)
        ],
        "final_dev_f1": f1s[-1] if f1s else None,
        "best_dev_f1": max(f1s) if f1s else None,
        "mean_dev_f1_last3": sum(f1s[-3:]) / len(f1s[-3:]) if f1s else None,
        "final_dev_loss": losses[-1][2] if losses else None,
        "last_checkpoint_full_dev": final_dev_f1(args, name, train),
    }


def markdown(rows: list[dict], minutes: float) -> str:
    head = (
        f"Parsing levers: {minutes:g} min of bf16 training each, dev F1 = strict EVALB over 64 "
        "dev sentences, greedy, tree-constrained (the trainer's evaluation).\n\n"
        "| variant | overrides | steps | tok/s | dev loss | dev F1 final | mean of last 3 "
        "| best | last checkpoint, all 127 dev: F1 / tagging |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )

    def fmt(value, spec=".2f"):
        return "-" if value is None else format(value, spec)

    return head + "\n".join(
        f"| {r['variant']} | {r['overrides']} | {r['steps']} | {r['tokens_per_sec']:.0f} | "
        f"{fmt(r['final_dev_loss'], '.3f')} | {fmt(r['final_dev_f1'])} | "
        f"{fmt(r['mean_dev_f1_last3'])} | {fmt(r['best_dev_f1'])} | "
        f"{r['last_checkpoint_full_dev']['f1']:.2f} / "
        f"{r['last_checkpoint_full_dev']['tagging_accuracy']:.2f} |"
        for r in rows
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data_dir", required=True, help="a wsj_parsing_ptb_sample data dir")
    parser.add_argument("--words_data_dir", default="", help=f"a {WORDS_PROBLEM} data dir")
    parser.add_argument("--work_dir", default="out/parsing_levers")
    parser.add_argument("--minutes", type=float, default=14)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma list")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    names = [n for n in args.variants.split(",") if n]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown variant(s) {unknown}; choose from {list(VARIANTS)}", file=sys.stderr)
        return 2
    rows = []
    for name in names:
        if not os.path.exists(os.path.join(args.work_dir, name, "done")):
            data = variant_data_dir(args, name)
            if name == "half_data":
                data = half_data_dir(args.data_dir, args.work_dir)
            start = time.time()
            train_variant(args, name, VARIANTS[name], data)
            print(f"{name}: {(time.time() - start) / 60:.1f} min", flush=True)
        rows.append(collect(args, name, VARIANTS[name]))
    table = markdown(rows, args.minutes)
    print(table)
    emit({"minutes_each": args.minutes, "cpu": _cpu_name(), "variants": rows}, args.out)
    if args.out:
        write_text_atomically(os.path.splitext(args.out)[0] + ".md", table + "\n")
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
