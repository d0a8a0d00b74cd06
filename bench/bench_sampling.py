#!/usr/bin/env python3
"""Sampling against greedy decoding on the peers' forced-steps work (``bench_decode_forced``'s:
random weights, 64 sources of 25 ids, decode length 25 + 50 = 75, an end id the model never
emits so that every row runs all 75 steps), beam 1, float32, batch 64.

Greedy is the argmax search; sampling is ``sampling_method=random`` at temperature 1 (and,
with ``--top_k``, ``sampling_keep_top_k``). Both searches are built and traced once in one
process, then timed alternately (greedy, sampling, greedy, ...), so that the other load of a
shared machine falls on both alike; the figure is the ratio of the medians, of wall time and
of the process's CPU time (TensorFlow held to one thread, so CPU time is the work done and
depends little on what else runs: the better figure on a busy machine).

    python -m bench.bench_sampling --out bench/results/sampling_vs_greedy_cpu.json
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf

from bench.report import CONFIGS, NEVER_EMITTED, build_model, cpu_model, emit, peer_sources
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.decoding.search import SearchConfig, Searcher


def timed(searcher, sources, batch: int) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of decoding every source once."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(sources), batch):
        searcher(sources[i : i + batch])[0].numpy()
    return time.perf_counter() - start, time.process_time() - cpu


def compare(model, sources, args, xla: bool) -> dict:
    common = dict(beam_size=1, extra_length=args.extra_len, use_xla=xla, eos_id=NEVER_EMITTED)
    settings = {
        "greedy": SearchConfig(**common),
        "sampling": SearchConfig(
            **common,
            sampling_method="random",
            sampling_temp=1.0,
            sampling_keep_top_k=args.top_k,
            random_seed=1,
        ),
    }
    searchers = {name: Searcher(model, config) for name, config in settings.items()}
    for searcher in searchers.values():  # trace (and compile) outside the timing
        timed(searcher, sources, args.batch)
    times = {name: [] for name in searchers}
    for _ in range(args.repeats):
        for name, searcher in searchers.items():
            times[name].append(timed(searcher, sources, args.batch))
    report = {"xla": xla}
    for index, clock in enumerate(("wall", "cpu")):
        rates = {name: [len(sources) / t[index] for t in ts] for name, ts in times.items()}
        medians = {name: statistics.median(r) for name, r in rates.items()}
        report[clock] = {
            "sentences_per_s_median": medians,
            "sentences_per_s_all": {k: [round(r, 2) for r in v] for k, v in rates.items()},
            "sampling_over_greedy": medians["sampling"] / medians["greedy"],
        }
    return report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--xla", default="0,1", help="comma-separated: 0 (no XLA), 1 (XLA)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--src_len", type=int, default=25)
    parser.add_argument("--extra_len", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--top_k", type=int, default=-1, help="sampling_keep_top_k")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(0)
    model, vocab = build_model(args.config, "float32")
    sources = peer_sources(args.sentences, args.src_len, vocab)
    report = {
        "bench": "sampling_vs_greedy",
        "cpu": cpu_model(),
        "config": args.config,
        "precision": "float32",
        "batch": args.batch,
        "sentences": args.sentences,
        "src_len": args.src_len,
        "decode_steps": args.src_len + args.extra_len,
        "sampling_keep_top_k": args.top_k,
        "repeats": args.repeats,
        "threads": 1,
        "note": "one process, greedy and sampling timed alternately on a shared machine: "
        "read the ratios (cpu: process CPU time), not the absolute rates",
        "results": [
            compare(model, sources, args, bool(int(x))) for x in args.xla.split(",") if x.strip()
        ],
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
