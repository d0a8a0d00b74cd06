#!/usr/bin/env python3
"""Training speed against the peers in one sitting: alternates this project's bare train step
with ``peer_kerashub_train.py`` and ``peer_modelgarden_train.py`` (``../shared/bench``), each
run alone on one core under the shared benchmark lock, and reports every run's real target
tokens/s and the ratio of the project's best setting to the best peer's per config.

Our run is this script with ``--worker``: the peers' work and timing exactly (their batch:
128 x 32, lengths 24-32; label smoothing 0.1; Adam; ``warmup`` untimed steps, then 3 blocks
of ``steps`` timed steps; the figure is the median of the block medians in real target
tokens/s), with the model built as the README says (``transformer_base_v1`` with the small
overrides, V 8192; or ``transformer_base_v1``, V 32768). The matmul peak of the run's dtype is
measured in the same sitting (``bench/report.py``, ``matmul_peak``) at the start and the end.

    python -m bench.bench_train_vs_peers --precision=float32 --configs=small,base \
        --out bench/results/train_vs_peers_fp32_cpu.json
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench.report import cpu_model, emit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "..", "shared", "bench")
STEPS = {"small": 10, "base": 2}  # the peers' defaults
WARMUP = {"small": 2, "base": 2}


def worker(config: str, precision: str, xla: bool, steps: int, warmup: int) -> dict:
    """Times this project's bare step the peers' way; returns their fields."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import numpy as np
    import tensorflow as tf

    from bench.report import build_training, peer_batch
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.training.loop.train_step import batch_loss_sums

    register_builtins()
    if precision == "bfloat16":
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    hp, model, optimizer, vocab = build_training(config)
    rng = np.random.default_rng(0)
    features = {
        k: tf.constant(peer_batch(rng, 128, 32, vocab), tf.int32) for k in ("inputs", "targets")
    }
    real = int(tf.math.count_nonzero(features["targets"]))

    @tf.function(jit_compile=xla)
    def step():
        with tf.GradientTape() as tape:
            loss, tokens = batch_loss_sums(model, features, hp.label_smoothing)
            loss = loss / tokens
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    start = time.perf_counter()
    first_loss = float(step())
    first_step_s = time.perf_counter() - start
    for _ in range(warmup - 1):
        float(step())
    block_medians = []
    for _ in range(3):
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            loss = float(step())
            times.append(time.perf_counter() - start)
        block_medians.append(statistics.median(times))
    rates = [real / t for t in block_medians]
    return {
        "config": config,
        "precision": precision,
        "xla": xla,
        "real_tgt_tokens": real,
        "first_step_s": first_step_s,
        "step_s_block_medians": block_medians,
        "tgt_tokens_per_s": {"median": statistics.median(rates), "min": min(rates)},
        "first_loss": first_loss,
        "last_loss": loss,
    }


def runs_for(config: str, args) -> list[list[tuple[str, list[str]]]]:
    """Groups of runs, each group timed back to back under one hold of the lock."""
    bf16 = "1" if args.precision == "bfloat16" else "0"
    ours = [args.python, "-m", "bench.bench_train_vs_peers", "--worker", config]
    ours += ["--precision", args.precision]
    kh = [args.kh_python, os.path.join(PEERS, "peer_kerashub_train.py"), "--config", config]
    mg = [args.mg_python, os.path.join(PEERS, "peer_modelgarden_train.py"), "--config", config]
    groups = []
    for jit in args.jit.split(","):
        group = [(f"ours_{'xla' if jit == '1' else 'noxla'}", [*ours, "--xla", jit])]
        for name, command in (("kerashub", kh), ("modelgarden", mg)):
            if name in args.peers.split(","):
                run = [*command, "--jit", jit, "--bf16", bf16, "--no-probe"]
                group.append((f"{name}_{'xla' if jit == '1' else 'noxla'}", run))
        groups.append(group)
    return groups


def timed_run(name: str, command: list[str], core: str) -> dict:
    started = time.time()
    proc = subprocess.run(
        ["taskset", "-c", core, *command], cwd=ROOT, capture_output=True, text=True
    )
    if proc.returncode:
        return {"name": name, "error": proc.stderr[-2000:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "name": name,
        "tgt_tokens_per_s": result["tgt_tokens_per_s"]["median"],
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
        "started": time.strftime("%H:%M:%S", time.gmtime(started)),
        "raw": {k: v for k, v in result.items() if k != "step_s_all"},
    }


def summarize(runs: list[dict]) -> dict:
    """Median tokens/s per setting, the best ours / best peer ratio, and the median of the
    per-round ratios of ours to the peer timed next to it (less exposed to the drift)."""
    rates: dict[str, list[float]] = {}
    for run in runs:
        if "tgt_tokens_per_s" in run:
            rates.setdefault(run["name"], []).append(run["tgt_tokens_per_s"])
    medians = {name: statistics.median(r) for name, r in rates.items()}
    ours = {k: v for k, v in medians.items() if k.startswith("ours")}
    peers = {k: v for k, v in medians.items() if not k.startswith("ours")}
    summary = {"median_tgt_tokens_per_s": medians}
    if ours and peers:
        top_ours, top_peer = max(ours, key=ours.get), max(peers, key=peers.get)
        summary.update(
            best_ours=top_ours,
            best_peer=top_peer,
            ratio_best_ours_to_best_peer=ours[top_ours] / peers[top_peer],
        )
    return summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", default="", help="(internal) time ours on this config")
    parser.add_argument("--xla", default="0")
    parser.add_argument("--out", default="")
    parser.add_argument("--configs", default="small,base")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--jit", default="0,1", help="XLA settings to compare, each side")
    parser.add_argument("--peers", default="kerashub,modelgarden")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--mg_python", default="/work/venv-mg/bin/python")
    parser.add_argument("--kh_python", default="/work/venv-kh/bin/python")
    parser.add_argument(
        "--lock", default=os.path.join(tempfile.gettempdir(), "t2t_repro_bench.lock")
    )
    parser.add_argument("--core", default="1")
    args = parser.parse_args()
    if args.worker:
        result = worker(
            args.worker, args.precision, args.xla == "1", STEPS[args.worker], WARMUP[args.worker]
        )
        print(json.dumps(result))
        return 0
    from bench.report import matmul_peak  # the sitting's peak, on the same core

    os.sched_setaffinity(0, {int(args.core)})
    import tensorflow as tf

    dtype = tf.as_dtype(args.precision)
    report = {
        "cpu": f"1 core of {cpu_model()}",
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "precision": args.precision,
        "work": "peers' batch 128 x 32 (lengths 24-32), label smoothing 0.1, Adam; median of "
        "3 block medians (small 10 steps, base 2) in real target tokens/s",
        "matmul_peak_start": matmul_peak(dtype),
        "configs": {},
    }
    for _ in range(args.rounds):
        for config in args.configs.split(","):
            runs = report["configs"].setdefault(config, {"runs": []})["runs"]
            for group in runs_for(config, args):
                with open(args.lock, "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    for name, command in group:
                        runs.append(timed_run(name, command, args.core))
                        brief = {k: v for k, v in runs[-1].items() if k != "raw"}
                        print(json.dumps({"config": config, **brief}), file=sys.stderr, flush=True)
                        report["configs"][config]["summary"] = summarize(runs)
                        emit(report, args.out)  # after every run: a late stop keeps them
    report["matmul_peak_end"] = matmul_peak(dtype)
    report["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
