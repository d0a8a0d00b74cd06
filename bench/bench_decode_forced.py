#!/usr/bin/env python3
"""Beam search on the peers' forced-steps work, timed as the peers time it.

Same work as ``../shared/bench/peer_modelgarden_decode.py --modes forced`` and
``peer_kerashub_decode.py --modes forced``: random weights, 64 source sentences of 25 random
ids (seed 1, ids 3..V-1, the last one EOS), beam 4, alpha 0.6, decode length = 25 + 50 = 75,
and an end id the model never emits (-1), so that every sentence runs all 75 steps. One repeat
decodes all sentences in batches of ``--batch`` (the call and ``.numpy()`` timed, as the
peers do); the figure is the median of ``--repeats`` repeats, after a warm-up call that traces.
Prints one JSON line; ``ids_sha256`` (the best beams' ids) shows whether two settings decode
the same.

    python -m bench.bench_decode_forced --config small --xla 1
"""

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf

from bench.report import CONFIGS, NEVER_EMITTED, build_model, peer_sources
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.decoding.search import SearchConfig, Searcher


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--xla", type=int, choices=[0, 1], default=1)
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--src_len", type=int, default=25)
    parser.add_argument("--extra_len", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--buckets", type=int, choices=[0, 1], default=1, help="0: trace the exact input length"
    )
    args = parser.parse_args()

    t_start = time.perf_counter()
    tf.keras.utils.set_random_seed(0)
    model, vocab = build_model(args.config, args.precision)
    config = SearchConfig(
        beam_size=4,
        alpha=0.6,
        extra_length=args.extra_len,
        use_xla=bool(args.xla),
        eos_id=NEVER_EMITTED,
        **({} if args.buckets else {"length_buckets": ()}),
    )
    searcher = Searcher(model, config)
    sources = peer_sources(args.sentences, args.src_len, vocab)
    t0 = time.perf_counter()
    searcher(sources[: args.batch])[0].numpy()
    warmup_s = time.perf_counter() - t0
    times, best = [], None
    for _ in range(args.repeats):
        outs = []
        t0 = time.perf_counter()
        for i in range(0, args.sentences, args.batch):
            outs.append(searcher(sources[i : i + args.batch])[0].numpy())
        times.append(time.perf_counter() - t0)
        best = np.concatenate([o[:, 0, 1:] for o in outs])
    steps = best.shape[1]
    report = {
        "bench": "decode_forced",
        "project": "t2t_repro",
        "config": args.config,
        "xla": bool(args.xla),
        "precision": args.precision,
        "length_buckets": list(config.length_buckets),
        "batch": args.batch,
        "beam": 4,
        "alpha": 0.6,
        "src_len": args.src_len,
        "decode_steps": steps,
        "sentences": args.sentences,
        "sentences_per_s": {
            "median": statistics.median(args.sentences / t for t in times),
            "min": min(args.sentences / t for t in times),
            "max": max(args.sentences / t for t in times),
        },
        "out_tokens_per_s_median": statistics.median(args.sentences * steps / t for t in times),
        "sec_all": [round(t, 3) for t in times],
        "warmup_trace_s": round(warmup_s, 1),
        "ids_sha256": hashlib.sha256(best.astype(np.int32).tobytes()).hexdigest(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
