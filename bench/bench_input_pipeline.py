#!/usr/bin/env python3
"""Input-pipeline throughput (examples/s, target tokens/s) on a problem's training shards.

    .venv/bin/python -m bench.bench_input_pipeline --problem=translate_ende_multi30k \
        --data_dir=DATA --hparams_set=transformer_base_v1 --batches=2000

Compare tokens/s with the training step's consumption (bench_train_step.py): the pipeline
must be at least 10x faster so that it is never the bottleneck.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from bench.report import emit
from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.data.input_pipeline import TRAIN, make_dataset


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", default="translate_ende_multi30k")
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--hparams_set", default="transformer_base_v1")
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    problem = registry.problem(args.problem)
    hp = registry.hparams(args.hparams_set)
    ds = make_dataset(problem.filepattern(args.data_dir, "train"), TRAIN, hp, seed=1)
    iterator = iter(ds)
    for _ in range(20):  # Warm-up: fills shuffle buffers.
        next(iterator)
    examples = tokens = padded = 0
    start, cpu_start = time.perf_counter(), time.process_time()  # CPU: all of TF's threads
    for _ in range(args.batches):
        batch = next(iterator)
        targets = batch["targets"].numpy()
        examples += targets.shape[0]
        tokens += int((targets > 0).sum())
        padded += targets.size
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    report = {
        "problem": args.problem,
        "hparams_set": args.hparams_set,
        "batch_size_tokens": hp.batch_size,
        "batches": args.batches,
        "examples_per_s": examples / seconds,
        "target_tokens_per_s": tokens / seconds,
        "target_nonpadding_fraction": tokens / max(padded, 1),
        # On a shared machine tokens per CPU second says what one free core would deliver.
        "cpu_seconds": cpu_seconds,
        "target_tokens_per_cpu_second": tokens / cpu_seconds,
        "load_average": os.getloadavg(),
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
