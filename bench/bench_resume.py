#!/usr/bin/env python3
"""Resume time of t2t-trainer after 0, 3,000 and 30,000 steps: the input iterator's saved
state (constant time) against replaying the consumed batches (what resume did before).

    .venv/bin/python -m bench.bench_resume --out=bench/results/resume_cpu.json

Method. For each step count N a fresh process builds the real ``Trainer`` on translate_toy
(transformer_quickstart with a tiny model: the model is not what is measured), takes its
training input exactly as a run does, advances it N batches *without training* (``next`` on
the iterator), sets the optimizer's step to N and saves a checkpoint with ``Trainer.save``:
the checkpoint a run would write at step N. A second fresh process then times what a
restarted run does before its first update: ``restore_latest`` (model, optimizer, RNG) plus
positioning the input and reading the first batch. For comparison the same process times the
old way, ``make_dataset(...).skip(N)`` and the first batch (batch-for-batch what the old
resume replayed). The resume time is the median of ``--repeats`` processes; the replay is
timed in the first of them only (at 30,000 steps it takes minutes).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HPARAMS = "hidden_size=32,filter_size=64,num_heads=2,num_hidden_layers=1,batch_size=512"


def trainer(data_dir: str, output_dir: str):
    from t2t_repro.training.trainer import Trainer, TrainerConfig

    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        hparams=HPARAMS,
        data_dir=data_dir,
        output_dir=output_dir,
        schedule="train",
        random_seed=1,
        attention_images=False,
    )
    return Trainer(cfg)


def make_checkpoint(data_dir: str, output_dir: str, steps: int) -> dict:
    t = trainer(data_dir, output_dir)
    t.run = None  # only its pieces are used
    t.ckpt.restore_latest(log=lambda m: None)
    feed = t._train_iterator()
    start = time.perf_counter()
    for _ in range(steps):
        next(feed.iterator)
    advance = time.perf_counter() - start
    t.optimizer.iterations.assign(steps)
    path = t.save()
    size = sum(
        os.path.getsize(os.path.join(output_dir, n))
        for n in os.listdir(output_dir)
        if n.startswith(os.path.basename(path) + ".data")
    )
    return {"advance_seconds": advance, "checkpoint_bytes": size}


def time_resume(data_dir: str, output_dir: str, steps: int, replay: bool) -> dict:
    from t2t_repro.data.input_pipeline import TRAIN, make_dataset

    t = trainer(data_dir, output_dir)
    start = time.perf_counter()
    restored = t.ckpt.restore_latest(log=lambda m: None)
    feed = t._train_iterator()
    next(feed)
    resume = time.perf_counter() - start
    assert restored and t.step == steps and t.ckpt.has_input_state(), (restored, t.step)
    if not replay:
        return {"resume_seconds": resume}
    start = time.perf_counter()
    pattern = t.problem.filepattern(data_dir, "train")
    ds = make_dataset(pattern, TRAIN, t.hparams, seed=1)
    next(iter(ds.skip(steps) if steps else ds))
    replay = time.perf_counter() - start
    return {"resume_seconds": resume, "replay_seconds": replay}


def child(argv: list[str]) -> None:
    mode, data_dir, output_dir, steps = argv[0], argv[1], argv[2], int(argv[3])
    if mode == "make":
        print(json.dumps(make_checkpoint(data_dir, output_dir, steps)))
    else:
        print(json.dumps(time_resume(data_dir, output_dir, steps, mode == "time_replay")))


def run_child(*args) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_resume", "--child", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default="0,3000,30000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="")
    parser.add_argument("--child", nargs=4)
    args = parser.parse_args()
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()
    if args.child:
        child(args.child)
        return 0
    from bench.report import emit
    from t2t_repro import registry

    work = tempfile.mkdtemp(prefix="bench_resume_")
    data_dir = os.path.join(work, "data")
    registry.problem("translate_toy").generate_data(
        data_dir, os.path.join(work, "tmp"), progress=False
    )
    rows = []
    for steps in (int(s) for s in args.steps.split(",")):
        output_dir = os.path.join(work, f"train_{steps}")
        made = run_child("make", data_dir, output_dir, steps)
        timings = [
            run_child("time_replay" if i == 0 else "time", data_dir, output_dir, steps)
            for i in range(args.repeats)
        ]
        rows.append(
            {
                "steps": steps,
                **made,
                "resume_seconds": statistics.median(t["resume_seconds"] for t in timings),
                "resume_all": [round(t["resume_seconds"], 3) for t in timings],
                "replay_seconds": timings[0]["replay_seconds"],
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo")
            if line.startswith("model name")
        ),
        "unknown",
    )
    emit(
        {
            "benchmark": "trainer resume: saved input-iterator state vs replaying batches",
            "problem": "translate_toy",
            "hparams": f"transformer_quickstart,{HPARAMS}",
            "cpu": cpu,
            "note": "CPU shared with other jobs; medians of --repeats processes",
            "rows": rows,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
