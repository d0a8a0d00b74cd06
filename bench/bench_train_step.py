#!/usr/bin/env python3
"""Training-step speed and MFU of transformer_base (V=32768, ~4096 target tokens per batch).

Measures, in one process: the fp32 matmul peak of this machine (large square matmuls, best
of several, before and after), the bare train step (forward + backward + Adam, one
tf.function) with and without XLA, and the trainer's own step loop on the same batches, timed
alternately with the bare step (its overhead: the median per-round ratio). MFU = analytic
FLOPs (t2t_repro.models.flops) / time / peak.

    .venv/bin/python -m bench.bench_train_step --out bench/results/train_step_cpu.json
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf

from bench.report import emit
from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.hparams_lib import create_hparams
from t2t_repro.learning_rate import make_optimizer
from t2t_repro.losses import padded_cross_entropy
from t2t_repro.models.flops import training_flops
from t2t_repro.training.train_step import TrainMetrics, make_train_loop


def matmul_peak(n: int = 2048, repeats: int = 5) -> float:
    a = tf.random.normal([n, n])
    b = tf.random.normal([n, n])
    f = tf.function(lambda: tf.reduce_sum(tf.matmul(a, b)))
    f()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        f().numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def make_model(hparams_set: str, vocab: int):
    hp = create_hparams(hparams_set, input_vocab_size=vocab)
    model = registry.model("transformer")(hp)
    model.build()
    optimizer = make_optimizer(hp)
    optimizer.build(model.trainable_variables)
    return hp, model, optimizer


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(hparams_set, vocab, batch, length, steps, xla):
    hp, model, optimizer = make_model(hparams_set, vocab)
    rng = np.random.default_rng(0)
    features = {
        k: tf.constant(rng.integers(2, vocab, size=[batch, length]), tf.int32)
        for k in ("inputs", "targets")
    }

    @tf.function(jit_compile=xla)
    def bare_step():
        with tf.GradientTape() as tape:
            loss, tokens = padded_cross_entropy(
                model(features, training=True), features["targets"], hp.label_smoothing
            )
            loss = loss / tokens
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    # The trainer's loop on the same batch, same XLA setting. This machine's speed drifts by
    # 10% over minutes, so the two are timed alternately, one update each per round (the
    # trainer call includes its per-call work: loop launch and reading the metrics, which the
    # trainer does once per log interval, not per update), and compared round by round.
    strategy = tf.distribute.get_strategy()
    metrics = TrainMetrics()
    loop = make_train_loop(strategy, model, optimizer, hp, metrics, jit_compile=xla)
    iterator = iter(tf.data.Dataset.from_tensors(features).repeat())
    one = tf.constant(1)

    def trainer_update():
        loop(iterator, one)
        metrics.read()

    for _ in range(2):
        bare_step().numpy()
        trainer_update()
    bare_times, trainer_times = [], []
    for _ in range(steps):
        bare_times.append(_timed(lambda: bare_step().numpy()))
        trainer_times.append(_timed(trainer_update))
    seconds = statistics.median(bare_times)
    trainer_s = statistics.median(trainer_times)
    ratio = statistics.median(t / b for t, b in zip(trainer_times, bare_times, strict=True))
    flops = training_flops(hp, batch, length, length)
    result = {
        "hparams_set": hparams_set,
        "vocab": vocab,
        "batch": [batch, length],
        "xla": xla,
        "bare_step_s": seconds,
        "steps_per_s": 1 / seconds,
        "target_tokens_per_s": batch * length / seconds,
        "step_tflop": flops / 1e12,
        "bare_step_times_s": bare_times,
        "trainer_step_times_s": trainer_times,
        "trainer_step_s": trainer_s,
        "trainer_target_tokens_per_s": batch * length / trainer_s,
        "trainer_overhead_pct": 100 * (ratio - 1),
    }
    return result, flops


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument(
        "--configs", default="transformer_base:32768:128:32,transformer_small:32768:128:32"
    )
    parser.add_argument("--xla", choices=["both", "on", "off"], default="both")
    args = parser.parse_args()
    report = {"load_average_start": os.getloadavg(), "cpus": os.cpu_count()}
    peak_before = matmul_peak()
    runs = []
    for spec in args.configs.split(","):
        name, vocab, batch, length = spec.split(":")
        for xla in {"both": (False, True), "on": (True,), "off": (False,)}[args.xla]:
            result, flops = bench(name, int(vocab), int(batch), int(length), args.steps, xla)
            runs.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    peak_after = matmul_peak()
    peak = max(peak_before, peak_after)
    for r in runs:
        r["mfu"] = r["step_tflop"] * 1e12 / r["bare_step_s"] / peak
        r["trainer_mfu"] = r["step_tflop"] * 1e12 / r["trainer_step_s"] / peak
    report.update(
        matmul_peak_gflops_before=peak_before / 1e9,
        matmul_peak_gflops_after=peak_after / 1e9,
        runs=runs,
        load_average_end=os.getloadavg(),
    )
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
