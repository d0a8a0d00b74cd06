#!/usr/bin/env python3
"""Beam search against the peers in one sitting: alternates ``bench.bench_decode_forced``
with ``peer_modelgarden_decode.py`` and ``peer_kerashub_decode.py`` (forced mode, batch 64),
each run alone on one core, and reports every run's sentences/s and the ratio of the
project's best to the best peer per config. The shared benchmark lock is held for a group of
runs (a peer and ours, a few minutes), so that each comparison is made back to back.

    python -m bench.bench_decode_vs_peers --out bench/results/decode_vs_peers_cpu.json
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
PEERS = os.path.join(ROOT, "..", "shared", "bench")


def runs_for(config: str, args) -> list[list[tuple[str, list[str]]]]:
    """Groups of runs, each group timed back to back under one hold of the lock."""
    ours = [args.python, "-m", "bench.bench_decode_forced", "--config", config]
    peer_args = ["--config", config, "--modes", "forced", "--batches", "64"]
    mg = os.path.join(PEERS, "peer_modelgarden_decode.py")
    kh = os.path.join(PEERS, "peer_kerashub_decode.py")
    groups = [
        [
            ("modelgarden_padded_xla", [args.mg_python, mg, *peer_args, "--padded-xla", "1"]),
            ("ours_fp32_xla", [*ours, "--xla", "1"]),
        ],
        [
            ("kerashub_jit", [args.kh_python, kh, *peer_args, "--jit", "1"]),
            ("ours_bf16_noxla", [*ours, "--xla", "0", "--precision", "bfloat16"]),
        ],
    ]
    if config == "small":
        groups[1].append(("ours_fp32_noxla", [*ours, "--xla", "0"]))
    return groups


def timed_run(name: str, command: list[str], core: str) -> dict:
    started = time.time()
    proc = subprocess.run(
        ["taskset", "-c", core, *command], cwd=ROOT, capture_output=True, text=True
    )
    if proc.returncode:
        return {"name": name, "error": proc.stderr[-2000:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if "results" in result:  # a peer: its one (forced, batch 64) row
        row = result["results"][0]
        rate, sec_all = row["sentences_per_s"]["median"], row["sec_all"]
    else:
        rate, sec_all = result["sentences_per_s"]["median"], result["sec_all"]
    return {
        "name": name,
        "sentences_per_s": rate,
        "sec_per_64_all": sec_all,
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
        "started": time.strftime("%H:%M:%S", time.localtime(started)),
        "raw": result,
    }


def summarize(runs: list[dict]) -> dict:
    """Every run, the median sentences/s per setting and the best-to-best ratio."""
    best = {}
    for run in runs:
        if "sentences_per_s" in run:
            best.setdefault(run["name"], []).append(run["sentences_per_s"])
    medians = {name: statistics.median(rates) for name, rates in best.items()}
    ours = {k: v for k, v in medians.items() if k.startswith("ours")}
    peers = {k: v for k, v in medians.items() if not k.startswith("ours")}
    summary = {"median_sentences_per_s": medians}
    if ours and peers:
        top_ours, top_peer = max(ours, key=ours.get), max(peers, key=peers.get)
        summary.update(
            best_ours=top_ours,
            best_peer=top_peer,
            ratio_best_ours_to_best_peer=ours[top_ours] / peers[top_peer],
            ratio_fp32_xla_to_best_peer=ours.get("ours_fp32_xla", 0) / peers[top_peer],
        )
    return {"summary": summary, "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--configs", default="small,base")
    parser.add_argument("--rounds", default="2,1", help="rounds per config, alternating")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--mg_python", default="/work/venv-mg/bin/python")
    parser.add_argument("--kh_python", default="/work/venv-kh/bin/python")
    parser.add_argument(
        "--lock",
        default=os.path.join(tempfile.gettempdir(), "t2t_repro_bench.lock"),
        help="a file every benchmark of a sitting locks, so that timed runs never overlap",
    )
    parser.add_argument("--core", default="1")
    args = parser.parse_args()
    report = {
        "cpu": f"1 core of {cpu_model()}",
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "work": "beam 4, alpha 0.6, batch 64, 64 sentences of 25 ids, "
        "75 forced decode steps; median of 3 repeats per run",
        "configs": {},
    }
    for config, rounds in zip(args.configs.split(","), args.rounds.split(","), strict=True):
        runs = []
        for _ in range(int(rounds)):
            for group in runs_for(config, args):
                with open(args.lock, "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    for name, command in group:
                        runs.append(timed_run(name, command, args.core))
                        brief = {k: v for k, v in runs[-1].items() if k != "raw"}
                        print(json.dumps(brief), file=sys.stderr, flush=True)
                        report["configs"][config] = summarize(runs)
                        emit(report, args.out)  # after every run: a late stop keeps them
    report["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
