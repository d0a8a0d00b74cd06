"""Subword encoder benchmark: t2t_repro.text_encoding.text_encoder against the plain T2T algorithm.

Encodes Multi30k train (EN and DE, 29,000 lines each) with the real T2T EN-DE 32k vocabulary,
once with ``tests/reference_subword.py`` (T2T's algorithm as written: per-character
tokenizer, per-token 2**20-slot hash cache) and once with ``SubwordTextEncoder.encode_batch``
(the compiled kernel, t2t_repro/text_encoding/subword_kernel.py), both from a freshly loaded
vocabulary (cold caches), best of ``--repeats`` runs each, alternating. Loading is timed
apart (``load_seconds``, best of the runs; ``first_load_seconds`` is the process's first
load, which also compiles the kernel or reads it from numba's cache). ``speedup`` is best
over best; ``speedup_median_of_rounds`` the median of the per-round ratios (robust to the
machine's speed drifting during the run). The outputs are compared id for id in the same
run; only the first reference output is kept, so every timed run starts from the same heap.
Then builds a vocabulary to target size 8192 from the token counts of Multi30k train EN+DE
with both implementations (``build_to_target_size``: the bisection over min_count, 4
iterations per try) and compares the subtoken lists.

Prints one JSON object (also written to ``--out`` when given). Reads ../shared/data; exits
with a message when it is absent.

    python -m bench.bench_subword [--repeats 5] [--no-reference-build] [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import statistics
import sys
import time

from bench.report import emit
from t2t_repro.text_encoding import tokenizer
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder
from tests import reference_subword as ref  # T2T's algorithm as written (the tests' oracle)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared", "data")
MULTI30K = os.path.join(SHARED, "multi30k")
VOCAB = os.path.join(SHARED, "t2t", "vocab.translate_ende_wmt32k.32768.subwords")


def read_lines(path: str, limit: int | None = None) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines[:limit] if limit else lines


def bench_encode(lines: list[str], repeats: int) -> dict:
    nbytes = sum(len(s.encode("utf-8")) for s in lines)
    ref_times, fast_times, second_times, ref_loads, fast_loads = [], [], [], [], []
    expected = None
    identical = True
    for _ in range(repeats):
        # Every run starts with the same heap: only the first reference output is kept (for
        # the comparisons), each output is dropped before the next run.
        t0 = time.perf_counter()
        r = ref.ReferenceSubwordEncoder(VOCAB)
        ref_loads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = [r.encode(s) for s in lines]
        ref_times.append(time.perf_counter() - t0)
        if expected is None:
            expected = out
        del r, out
        t0 = time.perf_counter()
        f = SubwordTextEncoder(VOCAB)
        fast_loads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = f.encode_batch(lines)
        fast_times.append(time.perf_counter() - t0)
        identical = identical and out == expected
        del out
        # A second call on the same encoder (the kernel keeps no cache between calls).
        t0 = time.perf_counter()
        out = f.encode_batch(lines)
        second_times.append(time.perf_counter() - t0)
        identical = identical and out == expected
        del out, f
    t_ref, t_fast = min(ref_times), min(fast_times)
    ratios = [r / f for r, f in zip(ref_times, fast_times, strict=True)]
    return {
        "sentences": len(lines),
        "megabytes_utf8": round(nbytes / 1e6, 3),
        "subtokens": sum(map(len, expected)),
        "identical_output": identical,
        "reference": {
            "seconds_best": round(t_ref, 4),
            "seconds_all": [round(t, 4) for t in ref_times],
            "sentences_per_s": round(len(lines) / t_ref),
            "mb_per_s": round(nbytes / 1e6 / t_ref, 3),
            "load_seconds": round(min(ref_loads), 4),
        },
        "fast": {
            "seconds_best": round(t_fast, 4),
            "seconds_all": [round(t, 4) for t in fast_times],
            "sentences_per_s": round(len(lines) / t_fast),
            "mb_per_s": round(nbytes / 1e6 / t_fast, 3),
            "second_call_seconds_best": round(min(second_times), 4),
            "load_seconds": round(min(fast_loads), 4),
        },
        "speedup": round(t_ref / t_fast, 2),
        "speedup_median_of_rounds": round(statistics.median(ratios), 2),
    }


def bench_build(lines: list[str], target: int, with_reference: bool) -> dict:
    t0 = time.perf_counter()
    counts = tokenizer.count_tokens(lines)
    t_count = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = SubwordTextEncoder.build_to_target_size(target, counts)
    t_fast = time.perf_counter() - t0
    out = {
        "target_size": target,
        "lines": len(lines),
        "distinct_tokens": len(counts),
        "count_tokens_seconds": round(t_count, 3),
        "fast": {"seconds": round(t_fast, 3), "vocab_size": fast.vocab_size},
    }
    if with_reference:
        t0 = time.perf_counter()
        ref_counts: dict = {}
        for s in lines:
            for tok in ref.tok_encode(s):
                ref_counts[tok] = ref_counts.get(tok, 0) + 1
        t_ref_count = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = ref.ReferenceSubwordEncoder.build_to_target_size(target, ref_counts)
        t_ref = time.perf_counter() - t0
        out["reference"] = {
            "seconds": round(t_ref, 3),
            "vocab_size": r.vocab_size,
            "count_tokens_seconds": round(t_ref_count, 3),
        }
        out["identical_counts"] = dict(counts) == ref_counts
        out["identical_vocab"] = list(fast.all_subtoken_strings) == r.all_subtokens
        out["speedup"] = round(t_ref / t_fast, 2)
    else:
        out["reference"] = "skipped (--no-reference-build)"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N lines")
    ap.add_argument("--target-size", type=int, default=8192)
    ap.add_argument("--no-reference-build", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if not (os.path.isdir(MULTI30K) and os.path.exists(VOCAB)):
        print(f"shared data not found ({MULTI30K}, {VOCAB}); nothing to benchmark", file=sys.stderr)
        return 0
    en = read_lines(os.path.join(MULTI30K, "train.en.gz"), args.limit)
    de = read_lines(os.path.join(MULTI30K, "train.de.gz"), args.limit)
    ref._alnum_set()  # T2T builds this table at import time; not part of encoding
    t0 = time.perf_counter()
    SubwordTextEncoder(VOCAB)
    first_load = time.perf_counter() - t0
    result = {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "vocab": os.path.basename(VOCAB),
        "first_load_seconds": round(first_load, 3),
        "encode": {"en": bench_encode(en, args.repeats), "de": bench_encode(de, args.repeats)},
        "build": bench_build(en + de, args.target_size, not args.no_reference_build),
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
