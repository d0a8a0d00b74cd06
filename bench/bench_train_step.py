#!/usr/bin/env python3
"""Training-step speed and MFU of transformer_base_v1 (V=32768, ~4096 target tokens per batch).

Measures, in one process: the matmul peak of this machine in the dtype the run trains in
(``bench/report.py``, ``matmul_peak``: fp32 for ``--precision=float32``, bf16 for
``bfloat16``; before and after, oneDNN and XLA), the bare train step (forward + backward + Adam, one
tf.function) with and without XLA, and the trainer's own step loop on the same batches, timed
alternately with the bare step (its overhead: the median per-round ratio). MFU = analytic
FLOPs (t2t_repro.models.flops) / time / peak.
A bf16 run on a CPU without bf16 instructions (no ``amx_bf16``/``avx512_bf16``) says so:
bf16 is emulated there and its slowdown is not a result.

``--peer_batch`` trains on the peers' batch (``../shared/bench``: lengths 24-32, PAD 0, EOS 1)
and also reports real (non-PAD) target tokens/s, the peers' figure.

    .venv/bin/python -m bench.bench_train_step --out bench/results/train_step_cpu.json
    .venv/bin/python -m bench.bench_train_step --precision=bfloat16 --configs \
        transformer_base_v1:32768:128:32 --xla off --peer_batch --skip_trainer
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import tensorflow as tf

from bench.report import cpu_model, emit, matmul_peak, peer_batch
from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.models.flops import training_flops
from t2t_repro.optimizers import make_optimizer
from t2t_repro.training.loop.train_step import TrainMetrics, batch_loss_sums, make_train_loop
from t2t_repro.training.precision_hint import bf16_instructions, cpu_flags

NO_BF16 = (
    "warning: this CPU has no bf16 matmul instructions (no amx_bf16 or avx512_bf16 in "
    "/proc/cpuinfo): TensorFlow emulates bf16 here, so a bf16 slowdown is not a result. "
    "Train in float32 on this CPU."
)


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


def bench(hparams_set, vocab, batch, length, steps, xla, padded=False, trainer=True):
    hp, model, optimizer = make_model(hparams_set, vocab)
    rng = np.random.default_rng(0)
    features = {
        k: tf.constant(
            peer_batch(rng, batch, length, vocab)
            if padded
            else rng.integers(2, vocab, size=[batch, length]),
            tf.int32,
        )
        for k in ("inputs", "targets")
    }
    real_targets = int(tf.math.count_nonzero(features["targets"]))

    @tf.function(jit_compile=xla)
    def bare_step():
        with tf.GradientTape() as tape:
            loss, tokens = batch_loss_sums(model, features, hp.label_smoothing)
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
        if trainer:
            trainer_update()
    bare_times, trainer_times = [], []
    for _ in range(steps):
        bare_times.append(_timed(lambda: bare_step().numpy()))
        if trainer:
            trainer_times.append(_timed(trainer_update))
    seconds = statistics.median(bare_times)
    flops = training_flops(hp, batch, length, length)
    result = {
        "hparams_set": hparams_set,
        "vocab": vocab,
        "batch": [batch, length],
        "batch_kind": "peer (lengths 24-32, padded)" if padded else "full length",
        "xla": xla,
        "compute_dtype": keras.mixed_precision.global_policy().compute_dtype,
        "bare_step_s": seconds,
        "steps_per_s": 1 / seconds,
        "target_tokens_per_s": batch * length / seconds,
        "real_target_tokens_per_s": real_targets / seconds,
        "step_tflop": flops / 1e12,
        "bare_step_times_s": bare_times,
    }
    if trainer:
        trainer_s = statistics.median(trainer_times)
        ratio = statistics.median(t / b for t, b in zip(trainer_times, bare_times, strict=True))
        result.update(
            trainer_step_times_s=trainer_times,
            trainer_step_s=trainer_s,
            trainer_target_tokens_per_s=batch * length / trainer_s,
            trainer_overhead_pct=100 * (ratio - 1),
        )
    return result, flops


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument(
        "--configs", default="transformer_base_v1:32768:128:32,transformer_small:32768:128:32"
    )
    parser.add_argument("--xla", choices=["both", "on", "off"], default="both")
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--peer_batch", action="store_true", help="the peers' padded batch")
    parser.add_argument("--skip_trainer", action="store_true", help="time the bare step only")
    args = parser.parse_args()
    report = {
        "load_average_start": os.getloadavg(),
        "cpus": os.cpu_count(),
        "cpu": cpu_model(),
        "precision": args.precision,
    }
    if args.precision == "bfloat16":
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        hardware = bf16_instructions(cpu_flags())
        report["bf16_instructions"] = hardware
        if not hardware:
            report["warning"] = NO_BF16
            print(NO_BF16, file=sys.stderr, flush=True)
    dtype = tf.as_dtype(args.precision)
    peak_before = matmul_peak(dtype)
    print(json.dumps({"matmul_peak_before": peak_before}), file=sys.stderr, flush=True)
    runs = []
    for spec in args.configs.split(","):
        name, vocab, batch, length = spec.split(":")
        for xla in {"both": (False, True), "on": (True,), "off": (False,)}[args.xla]:
            result, flops = bench(
                name,
                int(vocab),
                int(batch),
                int(length),
                args.steps,
                xla,
                padded=args.peer_batch,
                trainer=not args.skip_trainer,
            )
            runs.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    peak_after = matmul_peak(dtype)
    peak = max(peak_before["peak_gflops"], peak_after["peak_gflops"]) * 1e9
    for r in runs:
        r["mfu"] = r["step_tflop"] * 1e12 / r["bare_step_s"] / peak
        if "trainer_step_s" in r:
            r["trainer_mfu"] = r["step_tflop"] * 1e12 / r["trainer_step_s"] / peak
    report.update(
        matmul_peak_gflops_before=peak_before["peak_gflops"],
        matmul_peak_gflops_after=peak_after["peak_gflops"],
        matmul_peak_before=peak_before,
        matmul_peak_after=peak_after,
        runs=runs,
        load_average_end=os.getloadavg(),
    )
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
