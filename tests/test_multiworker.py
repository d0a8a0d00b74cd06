"""The real t2t-trainer as a two-process cluster on loopback (TF_CONFIG), as a user runs it.

Both TF_CONFIG formats, with and without bfloat16 (whose start-up speed probe once made
MultiWorkerMirroredStrategy fail: "Collective ops must be configured at program startup"),
SIGTERM to the non-chief worker (exit 143), and #36's failures: workers that restored
different checkpoints or got different flags refused at start, SIGKILL of the chief; #48's:
different warm starts refused, a hung restore ended, the chief's long save and dev decodes
waited for outside the collective timeout; #56's: a slow restore that works survives (it
holds the GIL), a collective in the chief's own work is refused, a peer lost while the chief
works ends the cluster with the timeout off.
Longer drills (kill and resume bit-identically, a restart after SIGTERM, time-based saves, a
corrupt shard, a stuck read) are in ``tools/drill_multiworker.py``.
"""

import glob
import json
import math
import os
import re
import shutil
import signal

import pytest

from tests import cluster_run
from tests.cluster_drills import LAUNCH_HPARAMS, drill_timeout, slow_chief_launch, slow_reads
from tests.test_trainer import data_dir  # noqa: F401 (the toy problem's data, module-scoped)


def assert_one_writer(out, tmp, checkpoints):
    """Only the chief's files in ``out``; no worker's temporary save left in ``tmp``."""
    names = sorted(os.listdir(out))
    assert sorted(n for n in names if n.startswith("ckpt-")) == sorted(
        f"ckpt-{step}.{ext}" for step in checkpoints for ext in ("index", "data-00000-of-00001")
    ), names
    assert len(glob.glob(str(out / "events.out.tfevents.*"))) == 1, names
    assert {"hparams.json", "flags.txt", "checkpoint"} <= set(names)
    assert not glob.glob(str(out / "*temp*")) and os.listdir(tmp) == []


@pytest.mark.slow
def test_two_workers_train_and_evaluate_one_model(data_dir):  # noqa: F811
    """Also: early stopping on the chief's dev BLEU (which the other worker does not compute)
    stops both workers at the same step (#34). T2T's rule on this schedule is ValidationMonitor's
    (#47): at a learning rate too small to change the dev decodes (``LAUNCH_HPARAMS``) no
    evaluation's BLEU is strictly above the first one's (step 1), so the evaluation at step 2
    (2 - 1 >= 1) stops the run. The run is the drill test's first launch (``slow_chief_launch``,
    run once: the chief's slowed dev decodes and save change nothing checked here)."""
    out, results = slow_chief_launch(data_dir)
    for code, _, stderr in results:
        assert code == 0, stderr[-3000:]
    # The premise: the same BLEU at both evaluations (LAUNCH_HPARAMS' learning rate).
    bleu = re.findall(r"^eval at step \d+: .*, BLEU ([\d.]+)", results[0][1], re.M)
    assert len(bleu) == 2 and bleu[0] == bleu[1], results[0][1]
    # Each says what it did: only the chief wrote the checkpoint.
    chief_says = (
        "stopped early at step 2: dev bleu has not increased in the 1 steps since its best "
        "evaluation of this job, at step 1"
    )
    assert chief_says in results[0][1] and f"; saved {out / 'ckpt-2'}" in results[0][1]
    worker_says = "stopped early at step 2: another worker's bleu has plateaued; the chief saved "
    assert worker_says in results[1][1], results[1][1]
    # One model (all-reduced updates): the same eval numbers on both workers.
    evals = [re.findall(r"eval at step \d+: loss [\d.]+", stdout) for _, stdout, _ in results]
    assert evals[0] == evals[1] and len(evals[0]) == 2, evals
    assert_one_writer(out, out.parent / "tmp", [1, 2])
    assert len(glob.glob(str(out / "eval" / "events.out.tfevents.*"))) == 1


def snapshot(*dirs):
    """Every file under ``dirs`` with its size and modification time: a write changes it."""
    return {
        os.path.join(root, name): (
            os.stat(os.path.join(root, name)).st_size,
            os.stat(os.path.join(root, name)).st_mtime_ns,
        )
        for d in dirs
        for root, _, names in os.walk(d)
        for name in names
    }


@pytest.mark.slow
def test_chief_format_bfloat16_sigterm_to_one_worker_stops_both(data_dir, tmp_path):  # noqa: F811
    """SIGTERM: both save the same step and exit with the signal code (143), so a restart
    policy reruns them (#36). Then a restart on which worker 1 sees no checkpoint (a stale
    listing) is refused by both workers in one line before anything is written."""
    out, tmp = tmp_path / "train", tmp_path / "tmp"
    tmp.mkdir()
    flags = ("--mixed_precision=bfloat16", "--schedule=train", "--log_step_count_steps=2")
    procs = cluster_run.start("chief", data_dir, out, *flags, "--train_steps=100000", tmp_dir=tmp)
    try:
        line = ""
        while not line.startswith("step 2/"):
            line = procs[0].stdout.readline()
            assert line or procs[0].poll() is None, procs[0].stderr.read()[-3000:]
    finally:
        procs[1].send_signal(signal.SIGTERM)  # the non-chief worker
        results = cluster_run.finish(procs)
    steps = set()
    for code, stdout, stderr in results:
        assert code == 143, stderr[-3000:]
        steps.update(re.findall(r"received .*: (?:the chief )?saved \S+ at step (\d+)", stdout))
    assert "received SIGTERM: the chief saved" in results[1][1], results[1][1]
    assert len(steps) == 1, [r[1] for r in results]
    step = int(steps.pop())
    assert_one_writer(out, tmp, [step])

    stale = tmp_path / "stale"  # what worker 1 sees of output_dir: no checkpoint at all
    stale.mkdir()
    before = snapshot(out, stale)
    again = cluster_run.run(
        "chief",
        data_dir,
        out,
        *flags,
        "--train_steps=100000",
        "--collective_timeout_secs=60",
        per_worker=[[], [f"--output_dir={stale}"]],
        timeout=300,
    )
    expected = (
        f"the workers restored different checkpoints from the chief's --output_dir {out}: "
        f"ckpt-{step} "
        f"(step {step}) on worker 0 (the chief), no checkpoint (step 0) on worker 1."
    )
    for code, stdout, stderr in again:
        assert code == 1 and expected in stderr and len(stderr.splitlines()) == 1, stderr
        assert not re.search(r"^step \d", stdout, re.M), stdout  # refused before step 1
    assert snapshot(out, stale) == before


@pytest.mark.slow
def test_workers_with_different_train_steps_are_refused_before_step_one(data_dir, tmp_path):  # noqa: F811
    """The handshake (#36): one line on both, exit 1, output_dir not even made."""
    out = tmp_path / "train"
    results = cluster_run.run(
        "worker",
        data_dir,
        out,
        "--schedule=train",
        "--collective_timeout_secs=60",
        per_worker=[["--train_steps=40"], ["--train_steps=80"]],
        timeout=300,
    )
    for code, _, stderr in results:
        assert code == 1 and len(stderr.splitlines()) == 1, stderr
        assert "different --train_steps: 40 on worker 0 (the chief), 80 on worker 1. " in stderr
    assert not out.exists()


@pytest.mark.slow
def test_sigkill_of_the_chief_ends_the_other_worker_with_one_line(data_dir, tmp_path):  # noqa: F811
    procs = cluster_run.start(
        "worker",
        data_dir,
        tmp_path / "train",
        "--schedule=train",
        "--train_steps=100000",
        "--log_step_count_steps=2",
        "--collective_timeout_secs=30",
    )
    try:
        line = ""
        while not line.startswith("step 2/"):
            line = procs[1].stdout.readline()
            assert line or procs[1].poll() is None, procs[1].stderr.read()[-3000:]
    finally:
        procs[0].kill()
        # finish() kills a process still running after 60 s: its code would then be -9.
        (_, _, _), (code, _, stderr) = cluster_run.finish(procs, timeout=60)
    assert code == 1 and len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("t2t-trainer: error: this is worker 1; worker 0 failed"), stderr
    assert "Restart the whole cluster (every process, same command); it " in stderr


def cluster_of(monkeypatch, config):
    """The strategy's reading (TF's resolver) of ``config``, checked against the TF-free
    reading that checks the cluster flags before TensorFlow starts: one Cluster, or one error."""
    from t2t_repro.errors import UserError
    from t2t_repro.training.cluster import tf_config
    from t2t_repro.training.cluster.distribution import cluster

    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    readings = []
    for read in (cluster, tf_config.read):
        try:
            readings.append(read())
        except UserError as e:
            readings.append(str(e))
    assert readings[0] == readings[1], readings
    if isinstance(readings[0], str):
        raise UserError(readings[0])
    return readings[0]


def test_both_tf_config_formats_rank_the_chief_first(monkeypatch):
    two = {"worker": ["a:1", "b:1"]}
    managed = {"chief": ["a:1"], "worker": ["b:1", "c:1"]}
    ranks = [
        cluster_of(monkeypatch, {"cluster": two, "task": {"type": "worker", "index": i}})
        for i in (0, 1)
    ] + [
        cluster_of(monkeypatch, {"cluster": managed, "task": task})
        for task in ({"type": "chief", "index": 0}, {"type": "worker", "index": 1})
    ]
    assert [(c.workers, c.index, c.is_chief) for c in ranks] == [
        (2, 0, True),
        (2, 1, False),
        (3, 0, True),
        (3, 2, False),
    ]
    assert cluster_of(monkeypatch, {}).workers == 1


@pytest.mark.parametrize(
    "config, message",
    [
        ({"cluster": {"worker": ["a:1"], "ps": ["b:1"]}, "task": {"type": "worker"}}, "ps tasks"),
        ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief"}}, "2 chiefs"),
        ({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}}, "not in"),
        ({"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker"}}, "not in"),
        ({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "ps", "index": 0}}, "not in"),
        ({"cluster": ["a:1", "b:1"], "task": {"type": "worker", "index": 0}}, "must be"),
    ],
)
def test_unusable_tf_config_is_one_clear_error(monkeypatch, config, message):
    from t2t_repro.errors import UserError

    with pytest.raises(UserError, match=message):
        cluster_of(monkeypatch, config)


def test_generate_data_on_a_cluster_is_refused_before_tensorflow_starts(monkeypatch, tmp_path):
    from t2t_repro.training.run_setup import TrainingError
    from t2t_repro.training.trainer import Trainer, TrainerConfig

    config = {"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        data_dir=str(tmp_path / "data"),
        output_dir=str(tmp_path / "train"),
        generate_data=True,
    )
    with pytest.raises(TrainingError, match="run t2t-datagen once"):
        Trainer(cfg)
    assert not (tmp_path / "data").exists()


@pytest.mark.slow
def test_chief_work_waits_stuck_restores_end_and_warm_starts_are_agreed(data_dir, tmp_path):  # noqa: F811
    """#48, three launches of two workers with a --collective_timeout_secs ``T`` derived from
    this machine's speed (``drill_timeout``):

    1. the chief's dev decodes and its save of ckpt-2 made ``T`` + 1 s longer each
       (T2T_DRILL_STAGE, progressing as a decode does): the other worker waits for them
       outside the collective timeout; both exit 0 (``slow_chief_launch``, shared);
    2. worker 1's restore hangs (its checkpoint's data file is a FIFO nobody writes): it is
       ended with one line naming the stage, the chief follows with one line, nothing written;
    3. workers warm-started from different checkpoints are refused before step 1 in one line,
       nothing written, exit 1 on both."""
    shared, results = slow_chief_launch(data_dir)
    assert [code for code, _, _ in results] == [0, 0], [err[-2000:] for _, _, err in results]
    evals = [re.findall(r"^eval at step \d+: .*$", stdout, re.M) for _, stdout, _ in results]
    assert len(evals[0]) == 2 and all(", BLEU " in line for line in evals[0]), results[0][1]
    assert len(evals[1]) == 2 and not any("BLEU" in line for line in evals[1]), results[1][1]
    assert f"the chief saved {shared / 'ckpt-2'}" in results[1][1], results[1][1]

    out = tmp_path / "train"  # the launch's run, resumed and changed below
    shutil.copytree(shared, out)
    timeout = drill_timeout()
    fast = (f"--collective_timeout_secs={timeout:g}", "--random_seed=1", "--eval_steps=1")
    fast += (f"--hparams={LAUNCH_HPARAMS}",)  # the launch's (a resume keeps them)
    stuck = tmp_path / "stuck"  # what worker 1 sees of output_dir: ckpt-2 with a FIFO for data
    stuck.mkdir()
    for name in ("checkpoint", "ckpt-2.index"):
        shutil.copy(out / name, stuck / name)
    os.mkfifo(stuck / "ckpt-2.data-00000-of-00001")
    before = snapshot(out, stuck)
    hung = cluster_run.run(
        "worker",
        data_dir,
        out,
        *fast,
        "--schedule=train",
        "--train_steps=4",
        per_worker=[[], [f"--output_dir={stuck}"]],
        timeout=300 + 10 * timeout,  # the launch waits some multiples of it
    )
    (chief, _, chief_err), (worker, _, worker_err) = hung
    # The read holds the GIL, so no thread of worker 1 runs: its watcher kills it (#56).
    assert worker == -signal.SIGKILL and len(worker_err.splitlines()) == 1, worker_err
    assert worker_err.startswith(
        f"t2t-trainer: error: stuck in the start-up: restoring the newest checkpoint of {stuck}: "
        "this worker did nothing for "
    ), worker_err
    assert worker_err.endswith(f"it resumes from {stuck / 'ckpt-2'}.\n"), worker_err
    assert chief == 1 and len(chief_err.splitlines()) == 1, chief_err
    assert chief_err.startswith("t2t-trainer: error: this is worker 0; "), chief_err
    assert snapshot(out, stuck) == before

    fresh = tmp_path / "fresh"
    refused = cluster_run.run(
        "worker",
        data_dir,
        fresh,
        *fast,
        "--schedule=train",
        "--train_steps=4",
        per_worker=[[f"--warm_start_from={out}"], [f"--warm_start_from={out / 'ckpt-1'}"]],
        timeout=300 + 10 * timeout,  # the launch waits some multiples of it
    )
    for code, stdout, stderr in refused:
        assert code == 1 and len(stderr.splitlines()) == 1, stderr
        assert (
            f"the workers warm-started from different weights: {out / 'ckpt-2'} (weights " in stderr
        ), stderr
        assert f", {out / 'ckpt-1'} (weights " in stderr and " on worker 1. " in stderr, stderr
        assert not re.search(r"^step \d", stdout, re.M), stdout
    assert not fresh.exists()
    slow_restores_live_chief_collectives_are_refused_and_a_lost_peer_ends(
        data_dir, tmp_path, out, timeout
    )


def slow_restores_live_chief_collectives_are_refused_and_a_lost_peer_ends(data, tmp, out, timeout):
    """#56, two more launches, on ``out`` of the test above, with its ``timeout``:

    4. the reads of one pass over ckpt-2's data file paused (the restore, which holds the
       GIL, lasts about 4 times --collective_timeout_secs, working; the input positions
       read after it from the same file are not slowed) on both workers: both restore; then
       the chief's dev decodes issue a collective: refused in one line, the other follows;
    5. --collective_timeout_secs=0 (no timeout, no watchdog): worker 1 killed while the chief
       decodes: the chief still ends, with the peer line.
    Both resume ``out`` at its --train_steps: no update (whose trace costs each worker seconds
    of CPU), the run's final evaluation and its dev decodes come right after the restore."""
    reads = tmp / "slow_reads.log"
    size = os.path.getsize(out / "ckpt-2.data-00000-of-00001")
    pause_us = int(4 * timeout * 1e6 * 1024 / size)
    slow = {
        "SLOW_PREAD_MAX": str(math.ceil(size / 1024)),
        "LD_PRELOAD": slow_reads(tmp),
        "SLOW_PREAD_MATCH": "ckpt-2.data",
        "SLOW_PREAD_USECS": str(pause_us),
        "SLOW_PREAD_LOG": str(reads),
    }
    # The schedule that evaluates at the end, as T2T's continuous_train_and_eval does (its
    # train_and_evaluate evaluates only every N steps: none when resumed at the last step)
    decode = ("--schedule=continuous_train_and_eval", "--local_eval_frequency=1", "--eval_steps=1")
    decode += ("--eval_decode_examples=2", "--no-attention_images", "--random_seed=1")
    decode += (f"--hparams={LAUNCH_HPARAMS}",)  # the launch's (a resume keeps them)
    results = cluster_run.run(
        "worker",
        data,
        out,
        *decode,
        f"--collective_timeout_secs={timeout:g}",
        "--train_steps=2",  # resumed at its last step: no update, straight to the dev decodes
        per_worker_env=[dict(slow, T2T_DRILL_STAGE="dev decodes=collective"), slow],
        timeout=300 + 10 * timeout,  # the launch waits some multiples of it
    )
    (chief, chief_out, chief_err), (worker, worker_out, worker_err) = results
    paused = len(reads.read_text()) * pause_us / 1e6 / 2  # seconds of pauses per worker
    assert paused > 3 * timeout, paused
    for stdout in (chief_out, worker_out):
        assert f"resumed from {out / 'ckpt-2'} at step 2" in stdout, stdout
    assert chief == 1 and len(chief_err.splitlines()) == 1, chief_err
    assert chief_err.startswith(
        "t2t-trainer: error: the chief's dev decodes issued a collective (collective_ops."
        "all_reduce_v2) that the other workers, waiting for the chief, would never join; "
    ), chief_err
    assert worker == 1 and len(worker_err.splitlines()) == 1, worker_err
    assert worker_err.startswith("t2t-trainer: error: this is worker 1; "), worker_err  # peer line

    procs = cluster_run.start(
        "worker",
        data,
        out,  # resumed at its last step, as above: no update, straight to the dev decodes
        *decode,
        "--collective_timeout_secs=0",
        "--train_steps=2",
        per_worker_env=[{"T2T_DRILL_STAGE": "dev decodes=10"}, {}],
    )
    try:
        line = ""
        while not line.startswith("drill: dev decodes=10"):
            line = procs[0].stdout.readline()
            assert line or procs[0].poll() is None, procs[0].stderr.read()[-3000:]
    finally:
        procs[1].kill()
        # finish() kills a process still running after 120 s: its code would then be -9.
        (code, _, stderr), _ = cluster_run.finish(procs, timeout=120)
    assert code == 1 and len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("t2t-trainer: error: this is worker 0; "), stderr
