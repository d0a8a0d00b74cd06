#!/usr/bin/env python3
"""Beam search's top-k alone: ``tf.math.top_k`` against ``t2t_repro.decoding.top_k.top_k`` on
the scores of one step (batch 64 x beam 4 x vocabulary, k = 8), 75 steps in a while loop as in
the search, with and without XLA. Checks that both give the same values and indices.

    python -m bench.bench_top_k --vocab 8192 --out bench/results/top_k_cpu.json
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf

from bench.report import cpu_model, emit
from t2t_repro.decoding.top_k import top_k

STEPS = 75


def loop(fn, use_xla: bool):
    """75 top-k calls on shifted scores, as the search's loop makes them."""

    def run(scores):
        def body(i, total):
            values, _ = fn(scores + tf.cast(i, tf.float32))
            return i + 1, total + tf.reduce_sum(values)

        return tf.while_loop(lambda i, _: i < STEPS, body, [0, 0.0])[1]

    return tf.function(run, jit_compile=use_xla)


def ms_per_step(fn, scores, repeats: int) -> float:
    fn(scores).numpy()  # trace / compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(scores).numpy()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times) / STEPS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    k = 2 * args.beam
    rng = np.random.default_rng(0)
    scores = tf.constant(rng.normal(size=[args.batch, args.beam * args.vocab]).astype(np.float32))
    expected, got = tf.math.top_k(scores, k=k), top_k(scores, k)
    report = {
        "bench": "top_k",
        "cpu": cpu_model(),
        "threads": os.environ.get("TF_NUM_INTRAOP_THREADS", "all cores"),
        "scores": [args.batch, args.beam * args.vocab],
        "k": k,
        "same_values_and_indices": bool(
            np.array_equal(expected[0], got[0]) and np.array_equal(expected[1], got[1])
        ),
        "ms_per_step": {},
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    for use_xla in (False, True):
        for name, fn in (("tf.math.top_k", lambda s: tf.math.top_k(s, k=k)), ("two_stage", None)):
            fn = fn or (lambda s: top_k(s, k))
            key = f"{name}{' xla' if use_xla else ''}"
            report["ms_per_step"][key] = ms_per_step(loop(fn, use_xla), scores, args.repeats)
    for suffix in ("", " xla"):
        report[f"speedup{suffix.replace(' ', '_')}"] = (
            report["ms_per_step"][f"tf.math.top_k{suffix}"]
            / report["ms_per_step"][f"two_stage{suffix}"]
        )
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
