#!/usr/bin/env python3
"""CTranslate2 (float32 and int8) against our float32 XLA beam search on the peers' work, and
against our bfloat16 one where the CPU multiplies bf16 in hardware (AVX512-BF16 or AMX). The
bf16 search runs without XLA: oneDNN's bf16 matmuls use those instructions, while XLA's CPU
bf16 dots were slower than its float32 ones on Zen 4 (16-19 against 27-30 sentences/s).

The work of ``bench.bench_decode_forced`` (and of the peers' ``--modes forced``): the
``small`` config (2+2 layers, d 256, ff 1024, 4 heads, V 8192) with random weights (seed 0),
64 sources of 25 random ids (``report.peer_sources``), batch 64, beam 4, alpha 0.6, 75
decode steps for every sentence. Ours forces the steps with an end id it never emits;
CTranslate2 with ``min_decoding_length = max_decoding_length = 75``. The same weights are
exported once (``serving/ctranslate2_export.py``) in float32 and int8. Each run is its own
process with 2 threads (OpenMP waits passive), timed as ``bench_decode_forced`` times (median
of 3 repeats after a warm-up); the runs alternate, ``--rounds`` times, under the shared
benchmark lock, and the summary gives every round's ratios to ours, so a busy machine shows
as spread, not bias.

    python -m bench.bench_ct2 --out bench/results/ct2_cpu.json
"""

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
CONFIG, SENTENCES, SRC_LEN, EXTRA, BEAM, ALPHA = "small", 64, 25, 50, 4, 0.6


def export_models(directory: str) -> dict[str, str]:
    """The seed-0 random ``small`` model exported in float32 and int8."""
    import tensorflow as tf

    from bench.report import build_model
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.serving.ctranslate2_export import export_ctranslate2

    register_builtins()
    tf.keras.utils.set_random_seed(0)  # the weights bench_decode_forced builds
    model, _ = build_model(CONFIG, "float32")
    dirs = {}
    for quantization in ("float32", "int8"):
        dirs[quantization] = os.path.join(directory, quantization)
        export_ctranslate2(model, dirs[quantization], quantization)
    return dirs


def ct2_run(model_dir: str, threads: int, repeats: int) -> dict:
    """One engine run (in its own process): CTranslate2 on the forced-steps work."""
    import ctranslate2

    from bench.report import CONFIGS, peer_sources

    vocab = CONFIGS[CONFIG][2]
    sources = [[str(t) for t in row] for row in peer_sources(SENTENCES, SRC_LEN, vocab)]
    translator = ctranslate2.Translator(model_dir, device="cpu", intra_threads=threads)
    steps = SRC_LEN + EXTRA
    options = dict(
        beam_size=BEAM,
        length_penalty=ALPHA,
        max_input_length=0,
        min_decoding_length=steps,
        max_decoding_length=steps,
    )
    t0 = time.perf_counter()
    translator.translate_batch(sources, **options)
    warmup = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = translator.translate_batch(sources, **options)
        times.append(time.perf_counter() - t0)
    assert all(len(r.hypotheses[0]) == steps for r in out)
    rates = [SENTENCES / t for t in times]
    return {
        "sentences_per_s": {"median": statistics.median(rates), "min": min(rates)},
        "sec_all": [round(t, 3) for t in times],
        "warmup_s": round(warmup, 2),
        "decode_steps": steps,
    }


def timed(name: str, command: list[str]) -> dict:
    # Passive OpenMP waits: on a shared machine CTranslate2's spinning threads lose their
    # cores (float32 ran 4x slower under load 10 than with passive waits). TF ignores it.
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_WAIT_POLICY="PASSIVE")
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode:
        return {"name": name, "error": proc.stderr[-2000:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "name": name,
        "sentences_per_s": result["sentences_per_s"]["median"],
        "sec_all": result["sec_all"],
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
    }


def summarize(rounds: list[list[dict]]) -> dict:
    """Median sentences/s per engine and each round's ratio to ours (same round)."""
    rates: dict[str, list[float]] = {}
    ratios: dict[str, dict[str, list[float]]] = {"ours_fp32_xla": {}, "ours_bf16": {}}
    for runs in rounds:
        by_name = {r["name"]: r.get("sentences_per_s") for r in runs}
        for name, rate in by_name.items():
            if rate:
                rates.setdefault(name, []).append(rate)
                for ours, to_ours in ratios.items():
                    if by_name.get(ours) and not name.startswith("ours"):
                        to_ours.setdefault(name, []).append(round(rate / by_name[ours], 3))
    summary = {
        "median_sentences_per_s": {k: round(statistics.median(v), 2) for k, v in rates.items()}
    }
    for ours, to_ours in ratios.items():
        if to_ours:
            summary[f"ratio_to_{ours}_per_round"] = to_ours
            summary[f"median_ratio_to_{ours}"] = {
                k: statistics.median(v) for k, v in to_ours.items()
            }
    return summary


def _fp32_peak() -> dict:
    """This CPU's float32 matmul peak now (a child process: this one stays TensorFlow-free)."""
    code = "import json, tensorflow as tf\nfrom bench.report import matmul_peak\n"
    code += "print(json.dumps(matmul_peak(tf.float32)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ct2_model_dir", default="", help="(internal) one CTranslate2 run")
    parser.add_argument(
        "--lock", default=os.path.join(tempfile.gettempdir(), "t2t_repro_bench.lock")
    )
    args = parser.parse_args()
    if args.ct2_model_dir:
        print(json.dumps(ct2_run(args.ct2_model_dir, args.threads, args.repeats)))
        return 0
    import ctranslate2

    report = {
        "cpu": f"{args.threads} threads on {cpu_model()} ({os.cpu_count()} cores)",
        "ctranslate2": ctranslate2.__version__,
        "work": f"{CONFIG} config, random weights, {SENTENCES} sources of {SRC_LEN} ids, "
        f"batch {SENTENCES}, beam {BEAM}, alpha {ALPHA}, {SRC_LEN + EXTRA} forced steps; "
        f"median of {args.repeats} repeats per run",
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "matmul_peak_start": _fp32_peak(),
        "rounds": [],
    }
    forced = [sys.executable, "-m", "bench.bench_decode_forced", "--config", CONFIG]
    forced += ["--repeats", str(args.repeats)]
    ours = [*forced, "--xla", "1"]
    with tempfile.TemporaryDirectory() as work:
        dirs = export_models(work)
        mine = [sys.executable, "-m", "bench.bench_ct2", "--threads", str(args.threads)]
        mine += ["--repeats", str(args.repeats), "--ct2_model_dir"]
        runs = [
            ("ours_fp32_xla", ours),
            ("ct2_float32", mine + [dirs["float32"]]),
            ("ct2_int8", mine + [dirs["int8"]]),
        ]
        from t2t_repro.training.precision_hint import bf16_instructions, cpu_flags

        if bf16_instructions(cpu_flags()):  # emulated bf16 is slower than float32: not run
            runs.insert(1, ("ours_bf16", [*forced, "--xla", "0", "--precision", "bfloat16"]))
        for _ in range(args.rounds):
            with open(args.lock, "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                report["rounds"].append([])
                for name, command in runs:
                    report["rounds"][-1].append(timed(name, command))
                    print(json.dumps(report["rounds"][-1][-1]), file=sys.stderr, flush=True)
            report["summary"] = summarize(report["rounds"])
            emit(report, args.out)
    report["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    report["matmul_peak_end"] = _fp32_peak()
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
