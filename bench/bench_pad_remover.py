#!/usr/bin/env python3
"""What T2T's encoder pad remover saves: encoder FFNs on real tokens only, bucketed batches.

Real sentence pairs (Multi30k EN-DE train, subword-encoded with T2T's 8k EN-DE vocabulary)
are bucketed as t2t-trainer does (T2T's boundaries by max(input, target) length, batch_size
4096 tokens) and each batch's inputs are padded to its longest input. On those batches the
encoder of transformer_base_v3 (d 512, d_ff 2048, 6 layers) runs with and without the pad
remover (same weights; one tf.function each), alternately: forward only as decoding and
evaluation run it (the pad remover gathers the real rows), and forward + backward as training
runs it (there the FFN output is masked instead: the gather was ~2x slower in training,
bench/results/pad_remover_cpu_gather_in_training.json). The gain is the median over rounds of
the per-round time ratio.

    .venv/bin/python -m bench.bench_pad_remover --out bench/results/pad_remover_cpu.json
"""

import argparse
import gzip
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bench.report import cpu_model, emit  # noqa: E402
from t2t_repro import registry  # noqa: E402
from t2t_repro.commands.builtins import register_builtins  # noqa: E402
from t2t_repro.data.bucketing import batching_scheme  # noqa: E402
from t2t_repro.data.datagen_lib import load_vocab  # noqa: E402
from t2t_repro.hparams_lib.build import create_hparams  # noqa: E402

SHARED = os.path.join(
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "..", "shared", "data"
)


def bucketed_batches(pairs, batch_size: int, max_batches: int) -> list[np.ndarray]:
    """Input batches as T2T's bucketing makes them (bucket by max length, pad per batch)."""
    scheme = batching_scheme(batch_size, 256)
    bounds, sizes = scheme["boundaries"] + [scheme["max_length"]], scheme["batch_sizes"]
    pending = {k: [] for k in range(len(bounds))}
    batches = []
    for source, target in pairs:
        bucket = next(k for k, b in enumerate(bounds) if max(len(source), len(target)) <= b)
        pending[bucket].append(source)
        if len(pending[bucket]) == sizes[bucket]:
            rows = pending.pop(bucket)
            pending[bucket] = []
            batch = np.zeros([len(rows), max(len(r) for r in rows)], np.int32)
            for i, row in enumerate(rows):
                batch[i, : len(row)] = row
            batches.append(batch)
            if len(batches) == max_batches:
                break
    return batches


def read_pairs(limit: int):
    vocab = load_vocab(os.path.join(SHARED, "t2t", "vocab.translate_ende_wmt8k.8192.subwords"))
    files = [
        gzip.open(os.path.join(SHARED, "multi30k", f"train.{lang}.gz"), "rt")
        for lang in ("en", "de")
    ]
    pairs = []
    for en, de in zip(*files, strict=True):
        pairs.append((vocab.encode(en.strip()) + [1], vocab.encode(de.strip()) + [1]))
        if len(pairs) == limit:
            break
    return pairs


def twin_encoders(hparams_set: str):
    models = []
    for use in (True, False):
        hp = create_hparams(
            hparams_set, f"use_pad_remover={use}", input_vocab_size=8190, target_vocab_size=8190
        )
        model = registry.model("transformer")(hp)
        model.build()
        models.append(model)
    for a, b in zip(models[0].weights, models[1].weights, strict=True):
        b.assign(a)
    return models


def timed(fn, batches) -> float:
    start = time.perf_counter()
    for batch in batches:
        out = fn(batch)
    float(tf.reduce_sum(out))  # Wait for the work.
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hparams_set", default="transformer_base_v3")
    parser.add_argument("--batch_size", type=int, default=4096)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    register_builtins()
    if not os.path.isdir(os.path.join(SHARED, "multi30k")):
        sys.exit("bench_pad_remover: ../shared/data (multi30k, t2t vocab) is absent.")
    batches = bucketed_batches(read_pairs(20000), args.batch_size, args.batches)
    real = sum(int((b != 0).sum()) for b in batches)
    padded = sum(b.size for b in batches)
    models = dict(
        zip(("pad_remover", "no_pad_remover"), twin_encoders(args.hparams_set), strict=True)
    )

    def forward(model):
        return tf.function(lambda ids: model.encode(ids)[0], reduce_retracing=True)

    def forward_backward(model):
        def step(ids):
            with tf.GradientTape() as tape:
                out = model.encode(ids, training=True)[0]
                loss = tf.reduce_sum(out * out)
            grads = tape.gradient(loss, model.encoder.trainable_variables)
            return tf.add_n([tf.reduce_sum(g) for g in grads])

        return tf.function(step, reduce_retracing=True)

    results = {}
    for kind, make in (("encode_forward", forward), ("encode_forward_backward", forward_backward)):
        fns = {name: make(model) for name, model in models.items()}
        for fn in fns.values():
            timed(fn, batches)  # Trace every batch shape once.
        times = {name: [] for name in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                times[name].append(timed(fn, batches))
        ratios = [b / a for a, b in zip(times["pad_remover"], times["no_pad_remover"], strict=True)]
        results[kind] = {
            **{f"{name}_s_median": statistics.median(t) for name, t in times.items()},
            **{f"{name}_s_best": min(t) for name, t in times.items()},
            "speedup_median_of_round_ratios": statistics.median(ratios),
            "round_ratios": ratios,
        }
    emit(
        {
            "benchmark": "pad_remover",
            "hparams_set": args.hparams_set,
            "device": tf.config.list_physical_devices("GPU") and "GPU" or "CPU",
            "cpu": cpu_model(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "tensorflow": tf.__version__,
            "batches": len(batches),
            "batch_shapes": [list(b.shape) for b in batches],
            "input_tokens_real": real,
            "input_tokens_padded": padded,
            "input_padding_fraction": 1 - real / padded,
            "rounds": args.rounds,
            "results": results,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
