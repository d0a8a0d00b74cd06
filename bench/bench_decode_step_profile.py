#!/usr/bin/env python3
"""Where the time of one beam-search step goes (batch 64 x beam 4, the forced-steps work of
``bench.bench_decode_forced``), by taking the search apart: 75 cached model steps alone
(``decode_step`` on 256 rows), then with the log-softmax and the top-k over beam x vocab, then
with the beam reordering of the self-attention cache; the full search for comparison.

    python -m bench.bench_decode_step_profile --config small --xla 1
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf

from bench.report import NEVER_EMITTED, build_model, peer_sources
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.decoding.beam_search import expand_to_beam, gather_beams, merge_beam_dim
from t2t_repro.decoding.constant_cache import hoist_constants
from t2t_repro.decoding.search import SearchConfig, search

BATCH, BEAM, STEPS = 64, 4, 75


def parts(model, sources, what: str):
    """75 model steps on [B*beam] rows, plus the search's pieces named in ``what``."""
    rows = merge_beam_dim(expand_to_beam(sources, BEAM))
    step, state = hoist_constants(
        model.decode_step, model.init_cache(rows, STEPS), model.CONSTANT_CACHE_KEYS, 1
    )
    ids = tf.zeros([BATCH * BEAM, STEPS + 1], tf.int32)

    def body(i, state, total):
        logits, state = step(ids, i, state)
        if "topk" in what:
            log_probs = logits - tf.reduce_logsumexp(logits, -1, keepdims=True)
            total += tf.reduce_sum(tf.math.top_k(tf.reshape(log_probs, [BATCH, -1]), 2 * BEAM)[0])
        if "reorder" in what:
            parents = tf.zeros([BATCH, BEAM], tf.int32) + (BEAM - 1 - i % BEAM)
            state = tf.nest.map_structure(
                lambda s: merge_beam_dim(
                    gather_beams(tf.reshape(s, [BATCH, BEAM] + s.shape[1:]), parents)
                ),
                state,
            )
        return i + 1, state, total + logits[0, 0]

    return tf.while_loop(lambda i, *_: i < STEPS, body, [0, state, 0.0])[2]


def timed(fn, sources, repeats: int) -> float:
    fn(sources)  # trace / compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        tf.nest.map_structure(lambda t: t.numpy(), fn(sources))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="small")
    parser.add_argument("--xla", type=int, choices=[0, 1], default=1)
    parser.add_argument("--precision", default="float32")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model, vocab = build_model(args.config, args.precision)
    sources = tf.constant(peer_sources(BATCH, 25, vocab))
    config = SearchConfig(extra_length=50, eos_id=NEVER_EMITTED, use_xla=bool(args.xla))
    seconds = {}
    for what in ("model", "model+topk", "model+topk+reorder"):
        fn = tf.function(lambda s, what=what: parts(model, s, what), jit_compile=bool(args.xla))
        seconds[what] = timed(fn, sources, args.repeats)
    full = tf.function(lambda s: search(model, config, s, STEPS), jit_compile=bool(args.xla))
    seconds["full_search"] = timed(full, sources, args.repeats)
    report = {
        "bench": "profile_decode_step",
        "config": args.config,
        "xla": bool(args.xla),
        "precision": args.precision,
        "seconds_for_75_steps": seconds,
        "ms_per_step": {
            "model_step": 1e3 * seconds["model"] / STEPS,
            "log_softmax_topk": 1e3 * (seconds["model+topk"] - seconds["model"]) / STEPS,
            "cache_reorder": 1e3 * (seconds["model+topk+reorder"] - seconds["model+topk"]) / STEPS,
            "rest_of_search": 1e3
            * (seconds["full_search"] - seconds["model+topk+reorder"])
            / STEPS,
        },
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
