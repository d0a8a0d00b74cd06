#!/usr/bin/env python3
"""Parsing recipe: the paper's Table 4 setup on the Penn Treebank sample, end to end, on a CPU.

    .venv/bin/python -m recipes.wsj_parsing --minutes=60 --work_dir=/tmp/wsj

datagen (wsj_parsing_ptb_sample_words: wsj_0001-0179 train, 0180-0189 dev, 0190-0199 test) ->
--members t2t-trainers side by side, other seeds, each on its share of the cores (time-boxed,
bf16; their periodic evaluation decodes the dev sentences and logs the EVALB F1, the dev-F1
curve) -> t2t-avg-all -> choices made on dev only: per member the last checkpoint, the average
of the last --average_n, or the average of the --average_n around the best point of its dev-F1
curve; then the best member alone or an ensemble (the members' choices, or every member's
averages); then greedy or the paper's beam 21 / alpha 0.3 (both tree-constrained, the
problem's default) -> t2t-decoder on the test sentences with both decodes -> t2t-evalb
(COLLINS rules), strictly and with --align_punct. Every step is the real CLI. Writes
results.json and results.md in --work_dir. --skip_training reuses finished --work_dir/train,
train2, ... (a dev-F1 curve is decoded from the kept checkpoints if the trainer did not log
one). With the LDC treebank in --tmp_dir use --problem=wsj_parsing_words (sections 02-21/22/23).
"""

import argparse
import json
import os
import subprocess
import sys
import time

from bench.report import (  # noqa: E402
    decode_and_score,
    event_scalars,
    training_minutes,
    training_stats,
    write_text_atomically,
)
from recipes.side_by_side import run_side_by_side  # noqa: E402
from t2t_repro.checkpoints.files import complete_checkpoints  # noqa: E402
from t2t_repro.workflow import run_tool  # noqa: E402

# The recipe's default: one source id per word, and the registered set with the decoder's slot
# signal, the encoder output of the word each slot fills, and word dropout (hparams/parsing.py;
# docs/parsing.md, "The recipe's hparams set"; bench/results/parsing_levers_cpu.md and
# parsing_hour_levers_cpu.json measure them).
PROBLEM = "wsj_parsing_ptb_sample_words"
HPARAMS_SET = "transformer_parsing_cpu_words"
REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SHARED = os.path.join(
    REPO,
    "..",
    "shared",
    "data",
    "ptb_sample",
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default=PROBLEM)
    parser.add_argument("--hparams_set", default=HPARAMS_SET)
    parser.add_argument("--hparams", default="", help="overrides of --hparams_set")
    parser.add_argument(
        "--mixed_precision",
        default="bfloat16",
        help="bfloat16: about 2x the fp32 tokens/s on this CPU (avx512_bf16)",
    )
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--train_steps", type=int, default=100000)
    parser.add_argument(
        "--eval_every",
        type=int,
        default=500,
        help="steps between checkpoints and dev evaluations (dev F1 included)",
    )
    parser.add_argument("--average_n", type=int, default=5)
    parser.add_argument(
        "--members",
        type=int,
        default=2,
        help="models trained side by side (other seeds), each on its share of the cores; "
        "the ensemble of all is a candidate on dev. 1: one model on every core",
    )
    parser.add_argument("--work_dir", default="out/wsj_parsing")
    parser.add_argument("--tmp_dir", default=SHARED)
    parser.add_argument("--skip_training", action="store_true")
    return parser.parse_args()


def dev_f1_curve(args, data: str, train: str) -> list[dict]:
    """The trainer's eval/parse_f1 scalars, or (older runs) decodes of the kept checkpoints."""
    logged = event_scalars(os.path.join(train, "eval"), "parse_f1")
    if logged:
        minutes = training_minutes(train, [step for _, step, _ in logged])
        return [
            {"step": step, "training_minutes": minute, "dev_f1": value}
            for (_, step, value), minute in zip(logged, minutes, strict=True)
        ]
    # recipes/dev_f1_curve.py through its command line (no script imports another's internals).
    out = os.path.join(train, "dev_f1_curve.json")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "recipes.dev_f1_curve",
            f"--problem={args.problem}",
            f"--data_dir={data}",
            f"--output_dir={train}",
            f"--hparams_set={args.hparams_set}",
            f"--out={out}",
        ],
        check=True,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    with open(out, encoding="utf-8") as f:
        return json.load(f)["curve"]


def previous_training_timings(results_path: str) -> dict:
    """datagen_s and train_s of the run a ``--skip_training`` rerun reuses, when recorded."""
    if not os.path.exists(results_path):
        return {}
    with open(results_path, encoding="utf-8") as f:
        old = json.load(f).get("timings", {})
    return {key: old[key] for key in ("datagen_s", "train_s") if key in old}


def average(train: str, output_dir: str, n: int, max_step: int) -> str:
    """t2t-avg-all of the newest ``n`` checkpoints at or before ``max_step`` (kept if a
    ``--skip_training`` rerun finds it made already)."""
    if not os.path.exists(os.path.join(output_dir, f"ckpt-{max_step}.index")):
        run_tool(
            "t2t-avg-all",
            f"--model_dir={train}",
            f"--output_dir={output_dir}",
            f"--n={n}",
            f"--max_step={max_step}",
        )
    return output_dir


def f1(result: dict) -> float:
    return result["evalb"]["all"]["f1"]


def row(split: str, name: str, scoring: str, result: dict) -> str:
    c = result[scoring]["all"]
    return (
        f"| {split} | {name} | {scoring} | {c['f1']:.2f} | {c['precision']:.2f} | "
        f"{c['recall']:.2f} | {c['complete_match']:.2f} | {c['valid']}/{c['sentences']} | "
        f"{c['errors']} | {c['tagging_accuracy']:.2f} | "
        f"{result[scoring].get('repairs', {}).get('sentences_repaired', 0)} |"
    )


def member_dirs(work: str, members: int) -> list[str]:
    """Training dirs: ``train`` for the first member (a single-model run's name), then
    ``train2``, ``train3``, ..."""
    return [os.path.join(work, "train" if k == 0 else f"train{k + 1}") for k in range(members)]


def train_members(args, data: str, trains: list[str]) -> None:
    """Trains every member for ``--minutes``: one trainer alone, or several side by side on
    disjoint cores (``recipes/side_by_side.py``); the members differ only in their random seed."""
    flags = [
        [
            f"--problem={args.problem}",
            f"--hparams_set={args.hparams_set}",
            f"--hparams={args.hparams}",
            f"--data_dir={data}",
            f"--output_dir={train}",
            f"--train_steps={args.train_steps}",
            f"--max_train_seconds={args.minutes * 60}",
            f"--mixed_precision={args.mixed_precision}",
            "--no-attention_images",
            "--schedule=train_and_evaluate",  # a dev evaluation every --eval_every steps
            f"--local_eval_frequency={args.eval_every}",
            "--keep_checkpoint_max=100",
            "--eval_decode_examples=1000",
        ]
        for train in trains
    ]
    if len(trains) == 1:
        run_tool("t2t-trainer", *flags[0])
    else:
        logs = [f"{train}.log" for train in trains]
        run_side_by_side("t2t-trainer", flags, logs)


def choose_checkpoint(args, data: str, train: str, timings: dict) -> tuple[dict, dict, str]:
    """(stats with the dev-F1 curve, greedy dev results by candidate, chosen candidate) of one
    member: its final checkpoint, the average of the last ``--average_n``, or the average
    around the peak of its dev-F1 curve, chosen by greedy dev F1 (ties keep the first)."""
    stats = training_stats(train)
    stats["dev_f1_curve"] = dev_f1_curve(args, data, train)
    curve = stats["dev_f1_curve"]
    # The run's final checkpoint (a time-boxed run stops between two dev evaluations).
    final_step, final = complete_checkpoints(train)[-1]
    stats["steps"] = final_step  # the loss is logged every 100 steps; the checkpoint is exact
    start = time.time()
    avg = os.path.join(train, "avg")
    candidates = {"avg": average(train, avg, args.average_n, final_step), "last": final}
    # The dev-F1 curve peaks before the end when the model starts to memorise the sample: the
    # average of the checkpoints around its best step is a third candidate.
    best = max(range(len(curve)), key=lambda k: curve[k]["dev_f1"])
    end = min(len(curve) - 1, best + args.average_n // 2)
    if end < len(curve) - 1:
        path = os.path.join(train, "avg_best")
        candidates["avg_best"] = average(train, path, args.average_n, curve[end]["step"])
    timings[f"average_{os.path.basename(train)}_s"] = time.time() - start
    dev = {
        f"greedy/{tag}": decode_and_score(args.problem, data, train, path, "dev", "greedy", timings)
        for tag, path in candidates.items()
    }
    tag = max(candidates, key=lambda t: f1(dev[f"greedy/{t}"]))
    stats["chosen_checkpoint"] = candidates[tag]
    stats["averages"] = [path for t, path in candidates.items() if t != "last"]
    return stats, dev, tag


def main() -> int:
    args = parse_args()
    work = os.path.abspath(args.work_dir)
    data = os.path.join(work, "data")
    trains = member_dirs(work, args.members)
    train = trains[0]
    timings = {}
    if args.skip_training:  # keep the finished run's datagen and training times
        timings.update(previous_training_timings(os.path.join(work, "results.json")))
    else:
        start = time.time()
        run_tool(
            "t2t-datagen",
            f"--problem={args.problem}",
            f"--data_dir={data}",
            f"--tmp_dir={os.path.abspath(args.tmp_dir)}",
        )
        timings["datagen_s"] = time.time() - start
        start = time.time()
        train_members(args, data, trains)
        timings["train_s"] = time.time() - start

    # Choices on dev only: each member's checkpoint (greedy dev F1), then one model or the
    # ensemble of all (greedy dev F1), then greedy or beam (dev F1).
    members, dev = [], {}
    for k, member in enumerate(trains):
        stats, member_dev, tag = choose_checkpoint(args, data, member, timings)
        members.append(stats)
        prefix = "" if len(trains) == 1 else f"member{k + 1}/"
        dev.update({prefix + name: result for name, result in member_dev.items()})
        stats["chosen_dev_name"] = f"{prefix}greedy/{tag}"
    best = max(range(len(members)), key=lambda k: f1(dev[members[k]["chosen_dev_name"]]))
    checkpoint, label = members[best]["chosen_checkpoint"], f"member{best + 1}"
    greedy = dev[members[best]["chosen_dev_name"]]
    model_dir = trains[best]  # its hparams.json; an ensemble finds each member's
    if len(trains) > 1:
        # Two ensembles: every member's chosen checkpoint, and every member's averages (the
        # last --average_n and the ones around its dev-F1 peak: two points of one run differ).
        ensembles = {"ensemble": [m["chosen_checkpoint"] for m in members]}
        averages = [path for m in members for path in m["averages"]]
        if len(averages) > len(members):
            ensembles["ensemble_averages"] = averages
        for name, paths in ensembles.items():
            dev[f"greedy/{name}"] = decode_and_score(
                args.problem, data, train, ",".join(paths), "dev", "greedy", timings, name
            )
            if f1(dev[f"greedy/{name}"]) > f1(greedy):
                checkpoint, label, greedy = ",".join(paths), name, dev[f"greedy/{name}"]
                model_dir = train
    dev[f"beam21/{label}"] = decode_and_score(
        args.problem, data, model_dir, checkpoint, "dev", "beam21", timings, label
    )
    decode = "beam21" if f1(dev[f"beam21/{label}"]) > f1(greedy) else "greedy"
    test = {
        name: decode_and_score(
            args.problem, data, model_dir, checkpoint, "test", name, timings, label
        )
        for name in ("greedy", "beam21")
    }
    if label.startswith("ensemble"):  # for the record (not a choice): the best member alone
        single = members[best]["chosen_checkpoint"]
        test[f"beam21/member{best + 1} alone"] = decode_and_score(
            args.problem, data, trains[best], single, "test", "beam21", timings, f"member{best + 1}"
        )

    first = members[0]
    summary = {
        "problem": args.problem,
        "hparams_set": args.hparams_set,
        "hparams": args.hparams,
        "mixed_precision": args.mixed_precision,
        "members": len(trains),
        "timings": timings,
        "steps": first["steps"],
        "tokens_per_sec": first["tokens_per_sec"],
        "dev_f1_curve": first["dev_f1_curve"],
        "member_runs": members,
        "chosen_on_dev": {"checkpoint": checkpoint, "model": label, "decode": decode},
        "dev": dev,
        "test": test,
    }
    write_text_atomically(os.path.join(work, "results.json"), json.dumps(summary, indent=2))
    table = results_markdown(args, summary, members, label, decode)
    write_text_atomically(os.path.join(work, "results.md"), table)
    print("\n" + table)
    print(f"results: {os.path.join(work, 'results.json')}")
    return 0


def results_markdown(args, summary: dict, members: list[dict], label: str, decode: str) -> str:
    head = (
        "| split | decode | scoring | F1 | precision | recall | complete match | scored "
        "| errors | tagging acc. | repaired outputs |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = [
        row(split, name, s, r)
        for split in ("dev", "test")
        for name, r in summary[split].items()
        for s in ("evalb", "evalb_align_punct")
    ]
    timings = summary["timings"]
    train_minutes = (
        timings["train_s"] / 60
        if "train_s" in timings
        else members[0]["dev_f1_curve"][-1]["training_minutes"]
    )
    runs = "; ".join(
        f"member {k + 1}: {m['steps']} steps, {m['tokens_per_sec']:.0f} target tokens/s"
        for k, m in enumerate(members)
    )
    text = (
        f"{args.problem}, {args.hparams_set}{f' ({args.hparams})' if args.hparams else ''}, "
        f"{args.mixed_precision or 'fp32'}, "
        f"{train_minutes or 0:.1f} min training, {len(members)} model(s) side by side ({runs}). "
        f"Chosen on dev: {label}, {decode}.\n\n" + head + "\n".join(rows) + "\n"
    )
    for k, m in enumerate(members):
        curve_rows = "\n".join(
            f"| {p['step']} | {p['training_minutes'] or 0:.1f} | {p['dev_f1']:.2f} |"
            for p in m["dev_f1_curve"]
        )
        text += (
            f"\nDev F1 of member {k + 1} (strict EVALB, greedy, tree-constrained) during "
            "training:\n\n| step | minutes | dev F1 |\n|---|---|---|\n" + curve_rows + "\n"
        )
    return text


if __name__ == "__main__":
    sys.exit(main())
