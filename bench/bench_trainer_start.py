#!/usr/bin/env python3
"""CPU seconds of t2t-trainer's start: TensorFlow's import, and what a process's first
training run pays once.

    .venv/bin/python -m bench.bench_trainer_start --out=bench/results/trainer_start_cpu.json
    .venv/bin/python -m bench.bench_trainer_start --tree=../before --tree=. --repeats=7

Method. A fresh process starts as a tool does (``console.start_tensorflow``, the trainer's
import, the built-in registrations): its CPU seconds at that point are the start. It then runs
``t2t-trainer``'s ``main`` twice on translate_toy (a one-layer width-32 model, 2 updates,
``--schedule=train``, no evaluation), each into a new output dir, and reports the process CPU
seconds of each run. The second run is the same work without what a process pays only once
(autograph's rewrite of the functions it converts, lazy imports, TensorFlow's first use); the
first minus the second is that once-only cost, which every ``t2t-trainer`` start pays. Each
``--tree`` (a checkout of this project) is measured in turn, alternately, ``--repeats``
processes each; medians reported.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench import report
from tests import suite_cpu

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
HPARAMS = (
    "hidden_size=32,filter_size=64,num_heads=2,num_hidden_layers=1,batch_size=512,"
    "learning_rate_warmup_steps=50,batch_shuffle_size=16"
)
CHILD = """
import json, os, sys, tempfile, time
sys.path.insert(0, os.getcwd())
# This checkout's problems/ and hparams/ too: else the venv's editable install maps
# t2t_repro.builtin.problems and .hparams to the checkout it was installed from.
import t2t_repro.builtin
t2t_repro.builtin.__path__.insert(0, os.getcwd())
from t2t_repro import console
console.start_tensorflow()
from t2t_repro.commands import trainer
from t2t_repro.commands.builtins import register_builtins
register_builtins()
seconds = [time.process_time()]
data_dir, hparams = sys.argv[1:3]
for _ in range(2):
    flags = ["--problem=translate_toy", f"--data_dir={data_dir}",
             f"--output_dir={tempfile.mkdtemp()}", "--hparams_set=transformer_base",
             f"--hparams={hparams}", "--train_steps=2", "--schedule=train",
             "--eval_decode_examples=0", "--no-attention_images"]
    start = time.process_time()
    assert trainer.main(flags) == 0
    seconds.append(time.process_time() - start)
print(json.dumps(seconds))
"""


def tree_name(tree: str) -> str:
    """A checkout's commit (its path if it is not a git checkout)."""
    out = subprocess.run(
        ["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or tree


def run_once(tree: str, data_dir: str) -> list[float]:
    """[start CPU-s, first run's, second run's] of one fresh process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=tree)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, data_dir, HPARAMS],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"{tree}: the trainer run failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", help="a checkout to measure (default: this)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    trees = [os.path.abspath(t) for t in (args.tree or [ROOT])]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = os.path.join(tmp, "data")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "t2t_repro.commands.datagen",
                "--problem=translate_toy",
                f"--data_dir={data_dir}",
                f"--tmp_dir={tmp}/tmp",
            ],
            cwd=ROOT,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
            capture_output=True,
            check=True,
        )
        runs: dict[str, list[list[float]]] = {tree: [] for tree in trees}
        for _ in range(args.repeats):
            for tree in trees:  # alternately: the machine's drift touches every tree alike
                runs[tree].append(run_once(tree, data_dir))
    results = {}
    for tree, triples in runs.items():
        start_cpu = statistics.median(t[0] for t in triples)
        pairs = [t[1:] for t in triples]
        first = statistics.median(p[0] for p in pairs)
        second = statistics.median(p[1] for p in pairs)
        results[tree_name(tree)] = {
            "start_cpu_s": round(start_cpu, 2),
            "first_run_cpu_s": round(first, 2),
            "second_run_cpu_s": round(second, 2),
            "once_only_cpu_s": round(statistics.median(p[0] - p[1] for p in pairs), 2),
            "runs": [[round(x, 2) for x in p] for p in pairs],
            "starts": [round(t[0], 2) for t in triples],
        }
        print(
            f"{tree_name(tree)}: start {start_cpu:.2f} CPU-s, first run {first:.2f}, "
            f"second {second:.2f}"
        )
    report.emit(
        {
            "cpu": report.cpu_model(),
            "cpu_kind": suite_cpu.cpu_kind(),
            "method": " ".join(__doc__.split("Method. ")[1].split()),
            "trees": results,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
