#!/usr/bin/env python3
"""Decoding throughput of transformer_base_v1: beam 4 and greedy, batch 32/64, cache and XLA on/off.

The model has random weights (V=32768): what is measured is the cost of the search, and a
random model seldom emits EOS, so every sentence runs to the maximum length, input (20 tokens
+ EOS) + extra_length 50 = 71 output positions: the "long outputs" case. Without the cache
the decoder reruns the whole prefix each step (t2t_repro.decoding.uncached). Each run is
timed on a second call after a warm-up call of the same shape (tracing/compiling excluded),
except where "includes_tracing" says otherwise.

    .venv/bin/python -m bench.bench_decode --out bench/results/decode_cpu.json
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf

from bench.report import emit
from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

DEFAULT_RUNS = (
    "cache:1:32:0,cache:1:32:1,cache:1:64:0,cache:1:64:1,"
    "cache:4:32:0,cache:4:32:1,cache:4:64:0,cache:4:64:1,"
    "nocache:1:32:0,nocache:1:32:1,nocache:4:32:0"
)


def output_tokens(ids: np.ndarray) -> np.ndarray:
    """Tokens of each best hypothesis up to and including its first EOS."""
    best = ids[:, 0, 1:]
    has_eos = (best == EOS_ID).any(axis=1)
    return np.where(has_eos, (best == EOS_ID).argmax(axis=1) + 1, best.shape[1])


def run(
    model, inputs, beam: int, use_cache: bool, xla: bool, extra_length: int, warmup: bool
) -> dict:
    config = SearchConfig(
        beam_size=beam, alpha=0.6, extra_length=extra_length, use_xla=xla, use_cache=use_cache
    )
    searcher = Searcher(model, config)
    if warmup:
        searcher(inputs)[0].numpy()
    start = time.perf_counter()
    ids = searcher(inputs)[0].numpy()
    seconds = time.perf_counter() - start
    tokens = output_tokens(ids)
    return {
        "beam_size": beam,
        "batch": int(inputs.shape[0]),
        "cache": use_cache,
        "xla": xla,
        "seconds": seconds,
        "sentences_per_s": inputs.shape[0] / seconds,
        "output_tokens_per_s": float(tokens.sum()) / seconds,
        "mean_output_length": float(tokens.mean()),
        "includes_tracing": not warmup,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--hparams_set", default="transformer_base_v1")
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--input_length", type=int, default=20)
    parser.add_argument("--extra_length", type=int, default=50)
    parser.add_argument(
        "--runs", default=DEFAULT_RUNS, help="comma list of cache|nocache:beam:batch:xla(0/1)"
    )
    parser.add_argument(
        "--no_warmup_slower_than",
        type=float,
        default=60.0,
        help="skip the warm-up call for no-cache runs expected slower than "
        "this many seconds (their timing then includes tracing)",
    )
    args = parser.parse_args()

    hp = create_hparams(args.hparams_set, input_vocab_size=args.vocab)
    model = registry.model("transformer")(hp)
    model.build_for()
    rng = np.random.default_rng(0)
    report = {
        "hparams_set": args.hparams_set,
        "vocab": args.vocab,
        "input_length_with_eos": args.input_length + 1,
        "decode_length": args.input_length + 1 + args.extra_length,
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg(),
        "runs": [],
    }
    greedy_nocache_s = None
    for spec in args.runs.split(","):
        kind, beam, batch, xla = spec.split(":")
        beam, batch, xla, use_cache = int(beam), int(batch), bool(int(xla)), kind == "cache"
        tokens = rng.integers(2, args.vocab, size=[batch, args.input_length])
        inputs = tf.constant(np.pad(tokens, [[0, 0], [0, 1]], constant_values=EOS_ID), tf.int32)
        estimate = (greedy_nocache_s or 0) * beam
        warmup = use_cache or estimate < args.no_warmup_slower_than
        result = run(model, inputs, beam, use_cache, xla, args.extra_length, warmup)
        if not use_cache and beam == 1 and not xla:
            greedy_nocache_s = result["seconds"]
        report["runs"].append(result)
        print(json.dumps(result), file=sys.stderr, flush=True)

    def find(beam, batch, cache, xla):
        return next(
            (
                r
                for r in report["runs"]
                if (r["beam_size"], r["batch"], r["cache"], r["xla"]) == (beam, batch, cache, xla)
            ),
            None,
        )

    speedups = {}
    for beam in (1, 4):
        for xla in (False, True):
            with_cache, without = find(beam, 32, True, xla), find(beam, 32, False, xla)
            if with_cache and without:
                speedups[f"beam{beam}_batch32_{'xla' if xla else 'noxla'}"] = (
                    without["seconds"] / with_cache["seconds"]
                )
    report.update(cache_speedup=speedups, load_average_end=os.getloadavg())
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
