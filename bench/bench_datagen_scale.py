#!/usr/bin/env python3
"""The WMT-size data path, timed: corpus -> real ``t2t-datagen`` -> the training input pipeline.

    .venv/bin/python -m bench.bench_datagen_scale --sizes=45000,450000,4500000 \
        --out=bench/results/datagen_scale_cpu.json

For each size (training pairs) it

1. writes a WMT14-like EN-DE corpus (``tools/wmt_like_corpus.py``) into ``<work_dir>/<n>/raw``;
2. runs ``python -m t2t_repro.commands.datagen --problem=translate_ende_wmt32k`` on it as a user
   would (a subprocess, downloads forbidden), timing its stages from its stderr lines (startup
   and source checks, vocab build, train encoding + shard writing, dev, test), with the peak
   RSS of the biggest process (``wait4``'s ``ru_maxrss``: datagen or one encoding worker) and,
   sampled every 0.5 s with psutil, of the whole process tree (RSS and PSS summed), and CPU
   seconds per stage next to wall seconds (the machine may be shared);
3. for the sizes in ``--rerun_sizes``, runs datagen again, with one encoding process instead of
   one per core, into a second data dir and compares the sha256 of every file (vocab and shards
   must be byte-identical);
4. runs ``bench/bench_input_pipeline.py`` on the train shards with ``transformer_big_v1``'s
   batching (TRAIN mode: shuffling, length buckets of 4,096 tokens), in its own process.

The CPU is shared on the development machine, so the load average is recorded before and after
every stage; compare figures only with that in mind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

from bench.report import cpu_model, emit

PROBLEM = "translate_ende_wmt32k"
DONE_RE = re.compile(rf"^{PROBLEM} (\w+): .*done in ([0-9.]+)s")
VOCAB_RE = re.compile(rf"^{PROBLEM}: building vocab")


def _cores() -> int:
    return len(os.sched_getaffinity(0))


class TreeSampler(threading.Thread):
    """Samples a process and its descendants every ``interval`` s: peak summed RSS and PSS, and
    the CPU seconds used so far (live processes + the waited-for dead ones), so that a stage's
    CPU time can be told apart from its wall time on a shared machine."""

    def __init__(self, pid: int, start: float, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.t0, self.interval = pid, start, interval
        self.peak_rss = self.peak_pss = 0
        self.cpu_series: list[tuple[float, float]] = [(0.0, 0.0)]  # (seconds since start, cpu s)
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            import psutil
        except ImportError:
            return
        while not self.stop.wait(self.interval):
            try:
                root = psutil.Process(self.pid)
                procs = [root] + root.children(recursive=True)
                times = root.cpu_times()
            except psutil.Error:
                return
            rss = pss = 0
            cpu = times.children_user + times.children_system
            for proc in procs:
                try:
                    info = proc.memory_full_info()
                    own = proc.cpu_times()
                except psutil.Error:
                    continue
                rss += info.rss
                pss += getattr(info, "pss", info.rss)
                cpu += own.user + own.system
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.cpu_series.append((time.monotonic() - self.t0, cpu))

    def cpu_at(self, seconds: float) -> float:
        """CPU seconds used by the tree at ``seconds`` after start (the last sample before)."""
        return max((cpu for t, cpu in self.cpu_series if t <= seconds), default=0.0)


def run_measured(cmd: list[str], env: dict | None = None) -> dict:
    """Run ``cmd``; its wall time, stdout, timestamped stderr lines and peak memory."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1
    )
    memory = TreeSampler(proc.pid, start)
    memory.start()
    lines: list[tuple[float, str]] = []
    out: list[str] = []

    def read_stderr() -> None:
        for line in proc.stderr:
            lines.append((time.monotonic() - start, line.rstrip("\n")))

    def read_stdout() -> None:
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=f, daemon=True) for f in (read_stderr, read_stdout)]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(proc.pid, 0)  # ru_maxrss: the process or a waited-for child
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    memory.stop.set()
    memory.join()
    if proc.returncode != 0:
        tail = "\n".join(text for _, text in lines[-20:])
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{tail}")
    memory.cpu_series.append((seconds, usage.ru_utime + usage.ru_stime))
    return {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,  # the process and its waited children
        "sampler": memory,
        "stdout": "".join(out),
        "stderr": lines,
        "peak_rss_max_process_mb": usage.ru_maxrss / 1024,
        "peak_rss_tree_sampled_mb": memory.peak_rss / 2**20,
        "peak_pss_tree_sampled_mb": memory.peak_pss / 2**20,
    }


def datagen_stages(run: dict) -> tuple[dict, dict]:
    """Wall and CPU seconds per stage from datagen's stderr (its 'building vocab' line and each
    split's 'done in' line, whose duration starts right after the vocab)."""
    vocab_start = next((t for t, text in run["stderr"] if VOCAB_RE.match(text)), None)
    spans = {}
    for t, text in run["stderr"]:
        m = DONE_RE.match(text)
        if m:
            spans[f"{m.group(1)}_encode_and_shards"] = (t - float(m.group(2)), t)
    if spans and vocab_start is not None:
        first_split = min(start for start, _ in spans.values())
        spans["startup_and_source_checks"] = (0.0, vocab_start)
        spans["vocab_build"] = (vocab_start, first_split)
    cpu_at = run["sampler"].cpu_at
    wall = {name: end - start for name, (start, end) in spans.items()}
    cpu = {name: cpu_at(end) - cpu_at(start) for name, (start, end) in spans.items()}
    wall["total"], cpu["total"] = run["seconds"], run["cpu_seconds"]
    return wall, cpu


def datagen_summary(stdout: str) -> dict:
    """The numbers of datagen's printed summary (pairs per split, tokens, dropped, replaced)."""
    summary = {}
    for split, n in re.findall(r"(train|dev|test) ([\d,]+)", stdout.split("tokens written")[0]):
        summary[f"{split}_pairs"] = int(n.replace(",", ""))
    patterns = {
        "input_tokens": r"inputs ([\d,]+)",
        "target_tokens": r"targets ([\d,]+)",
        "vocab_size": r"vocab size:\s+([\d,]+)",
        "dropped_empty_pairs": r"dropped empty pairs: ([\d,]+)",
        "replaced_undecodable_bytes": r"replaced undecodable bytes: ([\d,]+)",
    }
    for key, pattern in patterns.items():
        m = re.search(pattern, stdout)
        if m:
            summary[key] = int(m.group(1).replace(",", ""))
    return summary


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, fs in os.walk(path) for f in fs)


def file_hashes(data_dir: str) -> dict[str, str]:
    """sha256 of the vocab and every shard (the manifest holds no time, but is left out anyway:
    it is not training data)."""
    from t2t_repro.data.datagen_lib import file_sha256  # imports TensorFlow: only when needed

    return {
        name: file_sha256(os.path.join(data_dir, name))
        for name in sorted(os.listdir(data_dir))
        if name.startswith(f"vocab.{PROBLEM}") or name.startswith(f"{PROBLEM}-")
    }


def run_datagen(tmp_dir: str, data_dir: str, env: dict, extra: tuple = ()) -> dict:
    os.makedirs(data_dir, exist_ok=True)
    cmd = [sys.executable, "-m", "t2t_repro.commands.datagen", f"--problem={PROBLEM}"]
    cmd += [f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}", *extra]
    run = run_measured(cmd, env)
    summary = datagen_summary(run["stdout"])
    stages, cpu = datagen_stages(run)
    pairs = sum(
        v for k, v in summary.items() if k.endswith("_pairs") and k != "dropped_empty_pairs"
    )
    return {
        "stages_seconds": stages,
        "stages_cpu_seconds_sampled": cpu,
        "summary": summary,
        "pairs_per_s": pairs / run["seconds"],
        "train_pairs_per_s_encoding": summary.get("train_pairs", 0)
        / stages.get("train_encode_and_shards", float("nan")),
        "peak_rss_max_process_mb": run["peak_rss_max_process_mb"],
        "peak_rss_tree_sampled_mb": run["peak_rss_tree_sampled_mb"],
        "peak_pss_tree_sampled_mb": run["peak_pss_tree_sampled_mb"],
        "data_dir_bytes": dir_bytes(data_dir),
        "stderr_tail": [text for _, text in run["stderr"][-6:]],
    }


def run_pipeline(data_dir: str, work_dir: str, batches: int, env: dict) -> dict:
    out = os.path.join(work_dir, "input_pipeline.json")
    cmd = [sys.executable, "-m", "bench.bench_input_pipeline", f"--problem={PROBLEM}"]
    cmd += [f"--data_dir={data_dir}", "--hparams_set=transformer_big_v1", f"--batches={batches}"]
    run = run_measured(cmd + [f"--out={out}"], env)
    with open(out) as f:
        report = json.load(f)
    report["target_tokens_per_s_per_core"] = report["target_tokens_per_s"] / _cores()
    report["process_seconds"], report["process_cpu_seconds"] = run["seconds"], run["cpu_seconds"]
    report["peak_rss_mb"] = run["peak_rss_max_process_mb"]
    return report


def one_size(pairs: int, args, env: dict) -> dict:
    work = os.path.join(args.work_dir, str(pairs))
    shutil.rmtree(work, ignore_errors=True)
    raw, data = os.path.join(work, "raw"), os.path.join(work, "data")
    result: dict = {"pairs": pairs, "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    result["load_average_start"] = os.getloadavg()
    cmd = [sys.executable, "-m", "tools.wmt_like_corpus", f"--pairs={pairs}", f"--tmp_dir={raw}"]
    corpus = run_measured(cmd + [f"--seed={args.seed}"], env)
    info = json.loads(corpus["stdout"])
    result["corpus"] = {
        "seconds": corpus["seconds"],
        "cpu_seconds": corpus["cpu_seconds"],
        "word_table_seconds": info["table_seconds"],
        "bytes": info["bytes"],
        "word_types_per_language": info["word_types_per_language"],
        "peak_rss_mb": corpus["peak_rss_max_process_mb"],
    }
    print(f"[{pairs}] corpus {info['bytes'] / 1e6:.0f} MB in {corpus['seconds']:.1f}s", flush=True)
    result["datagen"] = run_datagen(raw, data, env)
    result["load_average_after_datagen"] = os.getloadavg()
    print(f"[{pairs}] datagen {result['datagen']['stages_seconds']}", flush=True)
    result["raw_dir_bytes_after_datagen"] = dir_bytes(raw)
    if pairs in args.rerun_sizes:
        data2 = os.path.join(work, "data_rerun")
        rerun = run_datagen(raw, data2, env, ("--num_workers=1",))  # another worker count too
        first, second = file_hashes(data), file_hashes(data2)
        differ = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
        result["rerun"] = {
            "files_compared": len(first),
            "byte_identical": not differ and len(first) > 0,
            "differing_files": differ,
            "rerun_num_workers": 1,
            "total_seconds": rerun["stages_seconds"]["total"],
            "vocab_sha256": next((v for k, v in first.items() if k.startswith("vocab.")), ""),
        }
        print(f"[{pairs}] rerun byte-identical: {result['rerun']['byte_identical']}", flush=True)
        shutil.rmtree(data2)
    if args.pipeline_batches:
        result["input_pipeline"] = run_pipeline(data, work, args.pipeline_batches, env)
        print(f"[{pairs}] pipeline {result['input_pipeline']['target_tokens_per_s']:,.0f} tok/s")
    result["load_average_end"] = os.getloadavg()
    if not args.keep:
        shutil.rmtree(work)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="45000,450000,4500000", help="training pairs, comma list"
    )
    parser.add_argument("--rerun_sizes", default="45000", help="sizes whose datagen is rerun")
    parser.add_argument("--work_dir", default="/tmp/datagen_scale")
    parser.add_argument("--seed", type=int, default=1, help="the corpus generator's seed")
    parser.add_argument("--pipeline_batches", type=int, default=2000, help="0: skip the pipeline")
    parser.add_argument("--keep", action="store_true", help="keep corpora and shards")
    parser.add_argument("--out", default="")
    parser.add_argument(
        "--merge", action="store_true", help="keep --out's results for sizes not run now"
    )
    args = parser.parse_args(argv)
    parse = lambda text: [int(s) for s in text.split(",") if s.strip()]  # noqa: E731
    args.sizes, args.rerun_sizes = parse(args.sizes), parse(args.rerun_sizes)
    env = dict(os.environ, T2T_REPRO_OFFLINE="1", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH", "")]))
    report = {
        "what": "WMT14-sized EN-DE corpus -> t2t-datagen translate_ende_wmt32k -> input pipeline "
        "(transformer_big_v1 batching, TRAIN mode)",
        "cpu": cpu_model(),
        "cores": _cores(),
        "memory_gb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
        "note": "shared machine: other processes ran alongside; see the load averages",
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "sizes": [],
    }
    if args.merge and args.out and os.path.isfile(args.out):  # keep the other sizes' results
        with open(args.out) as f:
            report["sizes"] = [s for s in json.load(f)["sizes"] if s["pairs"] not in args.sizes]
    for pairs in args.sizes:
        report["sizes"].append(one_size(pairs, args, env))
        report["sizes"].sort(key=lambda s: s["pairs"])
        emit(report, args.out)  # after every size: a long run keeps what it measured
    return 0


if __name__ == "__main__":
    sys.exit(main())
