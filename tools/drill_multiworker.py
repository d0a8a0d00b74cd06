#!/usr/bin/env python3
"""Failure drills of a two-worker t2t-trainer cluster on loopback (TF_CONFIG), as run by users.

    .venv/bin/python -m tools.drill_multiworker --out=bench/results/drill_multiworker.json

1. kill_resume: an uninterrupted run to --train_steps against a run whose non-chief worker is
   SIGKILLed after the first checkpoint (the chief is then stopped too, as a cluster manager
   does), restarted with the same command: the final checkpoints' variables (model,
   optimizer with its slots, dropout RNG states) must be bit-identical. Dropout is on
   (transformer_quickstart: 0.2 / 0.1).
2. sigterm: SIGTERM to the non-chief worker mid-run: both processes save the same step and
   exit with --signal_exit_code (143); a restart resumes from that checkpoint.
3. timed_saves: --save_checkpoints_secs=1 with one update per loop call, so the workers'
   clocks straddle the save times: no hang, both save the same steps.
4. sigkill_chief: SIGKILL of the chief after its first checkpoint: how soon and with what
   line the other worker exits; a restart resumes.
5. corrupt_shard: worker 1's training shards are corrupt (its own copy of data_dir).
6. stuck_read: worker 1's training shards are FIFOs that nobody writes (a hung file-system
   read), with --collective_timeout_secs=30: both must exit non-zero, neither may hang.
7. stuck_save: worker 1's checkpoint save hangs (T2T_DRILL_STAGE="checkpoint save=hang"),
   --collective_timeout_secs=30: it is ended with one line naming the stage, worker 0 follows.
8. long_chief_decode: the chief's dev decodes take 90 s longer (T2T_DRILL_STAGE="dev
   decodes=90", progressing), --collective_timeout_secs=30: both workers finish with 0.

Drills run with --drills=a,b update only their own entries of an existing --out file.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests import cluster_run  # noqa: E402

COMMON = ["--schedule=train", "--random_seed=1", "--log_step_count_steps=5"]


def variables(prefix: str) -> dict:
    import tensorflow as tf

    reader = tf.train.load_checkpoint(prefix)
    names = set(reader.get_variable_to_shape_map()) - {"_CHECKPOINTABLE_OBJECT_GRAPH"}
    return {name: np.asarray(reader.get_tensor(name)).tobytes() for name in names}


def wait_for(proc: subprocess.Popen, pattern: str, timeout: float = 600) -> str:
    """Reads ``proc``'s stdout until a line matches; returns that line."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise RuntimeError(f"exited {proc.returncode}: {proc.stderr.read()[-2000:]}")
        if re.search(pattern, line):
            return line
    raise TimeoutError(pattern)


def kill_resume(data_dir: str, work: str, steps: int) -> dict:
    args = [*COMMON, f"--train_steps={steps}", "--local_eval_frequency=10"]
    whole = cluster_run.run("worker", data_dir, f"{work}/whole", *args)
    assert all(code == 0 for code, _, _ in whole), [e[-2000:] for _, _, e in whole]
    procs = cluster_run.start("worker", data_dir, f"{work}/killed", *args)
    wait_for(procs[0], r"saved .*ckpt-10")
    procs[1].send_signal(signal.SIGKILL)
    start = time.time()
    try:  # Does the chief notice? (it waits in a collective; a cluster manager restarts it)
        procs[0].wait(timeout=120)
        chief = f"exited {procs[0].returncode} after {time.time() - start:.0f} s"
    except subprocess.TimeoutExpired:
        procs[0].kill()
        chief = "still waiting after 120 s: killed"
    cluster_run.finish(procs)
    resumed = cluster_run.run("worker", data_dir, f"{work}/killed", *args)
    assert all(code == 0 for code, _, _ in resumed), [e[-2000:] for _, _, e in resumed]
    resumed_from = re.findall(r"resumed from \S+ at step \d+", resumed[0][1])
    a, b = (variables(f"{work}/{d}/ckpt-{steps}") for d in ("whole", "killed"))
    # The saved input states are compared by what they feed (the weights 20 updates later),
    # not byte for byte: a prefetch buffer's fill at save time depends on timing.
    inputs = "worker_inputs/.ATTRIBUTES/VARIABLE_VALUE"
    differing = sorted(k for k in a if a[k] != b.get(k) and k != inputs)
    return {
        "steps": steps,
        "chief_after_worker_killed": chief,
        "restart": resumed_from,
        "variables_compared": len(a) - 1,
        "weights": sum(k.startswith("optimizer/_trainable_variables/") for k in a),
        "differing_variables": differing,
        "bit_identical": not differing and a.keys() == b.keys(),
        "input_state_bytes_equal": a[inputs] == b[inputs],
    }


def sigterm(data_dir: str, work: str) -> dict:
    args = [*COMMON, "--train_steps=100000", "--local_eval_frequency=100000"]
    procs = cluster_run.start("chief", data_dir, f"{work}/term", *args)
    wait_for(procs[0], r"^step 10/")
    procs[1].send_signal(signal.SIGTERM)
    results = cluster_run.finish(procs, timeout=300)
    saved = [
        re.findall(r"received (.*?): (?:the chief )?saved \S+ at step (\d+)", out)
        for _, out, _ in results
    ]
    steps = sorted({int(s) for found in saved for _, s in found})
    on_disk = sorted(os.path.basename(p) for p in os.listdir(f"{work}/term") if ".index" in p)
    again = cluster_run.run(
        "chief", data_dir, f"{work}/term", *args[:-2], f"--train_steps={steps[-1] + 5}"
    )
    return {
        "exit_codes": [code for code, _, _ in results],
        "received": saved,
        "same_step_on_both": len(steps) == 1 and all(saved),
        "checkpoints_on_disk": on_disk,
        "restart_exit_codes": [code for code, _, _ in again],
        "restart": re.findall(r"resumed from \S+ at step \d+", again[0][1]),
    }


def timed_saves(data_dir: str, work: str) -> dict:
    args = [*COMMON, "--train_steps=150", "--save_checkpoints_secs=1", "--steps_per_loop=1"]
    start = time.time()
    results = cluster_run.run("worker", data_dir, f"{work}/timed", *args, timeout=900)
    saved = [re.findall(r"saved \S+ckpt-(\d+)", out) for _, out, _ in results]
    return {
        "exit_codes": [code for code, _, _ in results],
        "seconds": round(time.time() - start, 1),
        "saves_per_worker": [len(s) for s in saved],
        "same_saves_on_both": saved[0] == saved[1],
    }


def ends(procs: list[subprocess.Popen], start: float, timeout: float = 300) -> list[dict]:
    """Each process's exit code, the second (after ``start``) at which it exited, and its
    last stderr line; a process still running after ``timeout`` is killed and reported."""
    ended: dict[int, float] = {}
    while len(ended) < len(procs) and time.time() < start + timeout:
        for i, proc in enumerate(procs):
            if i not in ended and proc.poll() is not None:
                ended[i] = round(time.time() - start, 1)
        time.sleep(0.2)
    found = []
    for i, proc in enumerate(procs):
        if i not in ended:
            proc.kill()
        _, err = proc.communicate()
        lines = err.strip().splitlines()
        found.append(
            {
                "code": proc.returncode,
                "exited_after_s": ended.get(i, f"still running after {timeout} s: killed"),
                "stderr_lines": len(lines),
                "last_line": lines[-1] if lines else "",
            }
        )
    return found


def sigkill_chief(data_dir: str, work: str) -> dict:
    args = [*COMMON, "--train_steps=40", "--local_eval_frequency=10"]
    procs = cluster_run.start("worker", data_dir, f"{work}/chief_killed", *args)
    wait_for(procs[0], r"saved .*ckpt-10")
    procs[0].send_signal(signal.SIGKILL)
    start = time.time()
    worker = ends(procs[1:], start)[0]
    resumed = cluster_run.run("worker", data_dir, f"{work}/chief_killed", *args)
    return {
        "other_worker": worker,
        "restart_exit_codes": [code for code, _, _ in resumed],
        "restart": re.findall(r"resumed from \S+ at step \d+", resumed[0][1]),
    }


def _own_data(data_dir: str, work: str, name: str, replace) -> str:
    """A copy of data_dir whose training shards ``replace(path)`` rewrote (worker 1's)."""
    import glob
    import shutil

    copy = f"{work}/{name}"
    shutil.copytree(data_dir, copy)
    for path in sorted(glob.glob(f"{copy}/*-train-*")):
        replace(path)
    return copy


def _corrupt(path: str) -> None:
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        f.write(b"\xff" * 64)


def _fifo(path: str) -> None:
    os.remove(path)
    os.mkfifo(path)


def one_bad_worker(data_dir: str, work: str, name: str, replace, *extra) -> dict:
    bad = _own_data(data_dir, work, f"{name}_data", replace)
    args = [*COMMON, "--train_steps=40", *extra]
    procs = cluster_run.start(
        "worker", data_dir, f"{work}/{name}", *args, per_worker=[[], [f"--data_dir={bad}"]]
    )
    return {"flags": list(extra), "workers": ends(procs, time.time())}


def drill_stage(data_dir: str, work: str, name: str, worker: int, stage: str, *extra) -> dict:
    """``T2T_DRILL_STAGE=stage`` on ``worker`` only (watchdog.py): how each worker ends."""
    args = [*COMMON, "--collective_timeout_secs=30", *extra]
    env = [{}, {}]
    env[worker] = {"T2T_DRILL_STAGE": stage}
    procs = cluster_run.start("worker", data_dir, f"{work}/{name}", *args, per_worker_env=env)
    return {"drill_stage": stage, "on_worker": worker, "workers": ends(procs, time.time(), 600)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--work", default="", help="parent of the scratch directory")
    parser.add_argument(
        "--drills",
        default="kill_resume,sigterm,timed_saves,sigkill_chief,corrupt_shard,stuck_read,"
        "stuck_save,long_chief_decode",
    )
    args = parser.parse_args()
    from t2t_repro import registry
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()
    report = {"cpu": _cpu_model()}
    with tempfile.TemporaryDirectory(dir=args.work or None) as work:
        data_dir = f"{work}/data"
        registry.problem("translate_toy").generate_data(data_dir, f"{work}/raw", progress=False)
        drills = {"kill_resume": lambda: kill_resume(data_dir, work, args.steps)}
        drills["sigterm"] = lambda: sigterm(data_dir, work)
        drills["timed_saves"] = lambda: timed_saves(data_dir, work)
        drills["sigkill_chief"] = lambda: sigkill_chief(data_dir, work)
        drills["corrupt_shard"] = lambda: one_bad_worker(data_dir, work, "corrupt", _corrupt)
        drills["stuck_read"] = lambda: one_bad_worker(
            data_dir, work, "stuck", _fifo, "--collective_timeout_secs=30"
        )
        drills["stuck_save"] = lambda: drill_stage(
            data_dir,
            work,
            "stuck_save",
            1,
            "checkpoint save=hang",
            "--train_steps=40",
            "--local_eval_frequency=10",
        )
        drills["long_chief_decode"] = lambda: drill_stage(
            data_dir,
            work,
            "long_chief_decode",
            0,
            "dev decodes=90",
            "--schedule=train_and_evaluate",
            "--train_steps=10",
            "--local_eval_frequency=10",
        )
        for name in args.drills.split(","):
            start = time.time()
            report[name] = drills[name]()
            report[name]["wall_seconds"] = round(time.time() - start, 1)
            print(name, json.dumps(report[name]), flush=True)
    if args.out and os.path.exists(args.out):  # the drills not run keep their entries
        with open(args.out) as f:
            report = {**json.load(f), **report}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


def _cpu_model() -> str:
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].strip() for line in f if "model name" in line), "")


if __name__ == "__main__":
    main()
