"""A checkpoint resumes on another cluster shape when asked (``--reshard_on_resume``, #36):
two workers -> one host -> two workers, with the weights, optimizer, step and learning rate
restored exactly and the global batch kept (accumulation on fewer replicas). Without the
flag, the one-line refusal stays. ``resume_layout``'s rules without TensorFlow work."""

import re
import shutil

import numpy as np
import pytest

from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.training.cluster.resume_layout import resharded_seed, resume_layout
from tests import cluster_run
from tests.cluster_drills import LAUNCH_HPARAMS, slow_chief_launch
from tests.grappler import grappler_off_env
from tests.test_trainer import (
    checkpoint_values,
    data_dir,  # noqa: F401 (the toy problem's data, module-scoped)
)
from tests.tools import run_tool

# The module checks resumption, layouts and restored values, no number a graph rewrite moves:
# its in-process trainer and its one-host tool runs go without Grappler (tests/grappler.py),
# as the clusters of tests/cluster_run.py do.
pytestmark = pytest.mark.usefixtures("without_grappler")

BATCH_LINE = re.compile(
    r"batch: (\d+) tokens per replica x (\d+) replica\(s\) x (\d+) micro-batch\(es\) = up to "
    r"([\d,]+) tokens per update"
)


def layout(saved_workers, saved_micro, workers, replicas, accumulate=1, reshard=False):
    return resume_layout(
        "ckpt-4", saved_workers, saved_micro, workers, replicas, accumulate, reshard
    )


def test_same_shape_resumes_as_saved():
    assert layout(2, 2, 2, 2) == type(layout(2, 2, 2, 2))(1, False)
    assert layout(1, 0, 1, 1, accumulate=3).accumulate == 3  # no record: the hparams' own


def test_another_worker_count_is_refused_without_the_flag():
    with pytest.raises(CheckpointError, match="--reshard_on_resume") as e:
        layout(2, 2, 1, 1)
    assert "saved by a cluster of 2 workers and this run is on one host" in str(e.value)
    with pytest.raises(CheckpointError, match="does not record its global batch"):
        layout(2, 0, 1, 1, reshard=True)  # an older checkpoint: its global batch is unknown


def test_reshard_keeps_the_global_batch_in_whole_micro_batches():
    one_host = layout(2, 2, 1, 1, reshard=True)
    assert (one_host.accumulate, one_host.reshard) == (2, True)
    assert "2 micro-batches per update = 1 replica(s) x 2 accumulation step(s)" in one_host.note
    assert layout(1, 4, 2, 2, accumulate=4, reshard=True).accumulate == 2
    with pytest.raises(CheckpointError, match="do not divide among this run's 2 replicas"):
        layout(1, 3, 2, 2, reshard=True)


def test_same_workers_keep_the_saved_global_batch_on_other_replicas():
    """One host resumed with fewer replicas accumulates more; a layout that cannot keep the
    global batch says that it changes (as before the record, nothing is refused)."""
    kept = layout(1, 4, 1, 2)
    assert (kept.accumulate, kept.reshard) == (2, False) and "keeping the global batch" in kept.note
    changed = layout(1, 3, 1, 2)
    assert changed.accumulate == 1 and "a different global batch" in changed.note


def test_resharded_seed_is_agreed_and_moves_with_the_step():
    assert resharded_seed(None, 4) is None
    assert resharded_seed(1, 4) == resharded_seed(1, 4) != resharded_seed(1, 8)
    assert 0 <= resharded_seed(2**31 - 1, 10**9) < 2**31


def batch_layout(stdout: str) -> tuple[int, int, int]:
    """(replicas, micro-batches per replica, tokens per update) of a trainer's batch line."""
    match = BATCH_LINE.search(stdout)
    assert match, stdout[-2000:]
    return int(match[2]), int(match[3]), int(match[4].replace(",", ""))


def saved(path) -> dict:
    values = checkpoint_values(str(path))
    micro = values["micro_batches_per_update/.ATTRIBUTES/VARIABLE_VALUE"]
    workers = values.get("worker_inputs/.ATTRIBUTES/VARIABLE_VALUE")
    return {"micro": int(micro), "workers": None if workers is None else len(workers)}


def restored_matches(data, out, step: int, tmp_path) -> None:
    """A one-host trainer resharding ``out``'s ckpt-<step> holds exactly its weights, Adam
    slots, RNG states and step, the learning rate of that step, and accumulates 2."""

    from t2t_repro.optimizers import make_optimizer
    from t2t_repro.training.trainer import Trainer, TrainerConfig

    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        data_dir=str(data),
        output_dir=str(out),
        hparams=LAUNCH_HPARAMS,
        schedule="train",
        train_steps=2 * step,
        reshard_on_resume=True,
    )
    trainer = Trainer(cfg)
    trainer.start()
    assert (trainer.step, trainer.accumulate, trainer.resharded) == (step, 2, True)
    fresh = make_optimizer(trainer.hparams)  # the schedule, evaluated at the restored step
    fresh.iterations.assign(step)
    assert trainer._learning_rate() == float(fresh.learning_rate)  # noqa: SLF001
    written = trainer.ckpt.checkpoint.write(str(tmp_path / "restored" / "ckpt"))
    a, b = checkpoint_values(str(out / f"ckpt-{step}")), checkpoint_values(written)
    kept = [k for k in a if k.split("/")[0] in ("model", "optimizer", "rng_states")]
    assert len(kept) > 20 and any(k.startswith("optimizer/") for k in kept)
    for key in kept:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.slow
def test_two_workers_to_one_host_and_back(data_dir, tmp_path):  # noqa: F811
    """The two workers' run is test_multiworker's first drill launch (``slow_chief_launch``:
    2 steps, run once for the whole test run), resumed here in a copy."""
    shared, two = slow_chief_launch(data_dir)
    for code, _, stderr in two:
        assert code == 0, stderr[-3000:]
    assert batch_layout(two[0][1])[:2] == (2, 1)
    out = tmp_path / "train"
    shutil.copytree(shared, out)
    assert saved(out / "ckpt-2") == {"micro": 2, "workers": 2}
    flags = ("--schedule=train", "--random_seed=1", "--local_eval_frequency=1000")
    flags += (f"--hparams={LAUNCH_HPARAMS}",)  # the launch's (a resume keeps them)

    # One host without the flag: the one-line refusal, nothing written.
    one_host = [f"--{k}" for k in ("problem=translate_toy", "hparams_set=transformer_quickstart")]
    one_host += [f"--data_dir={data_dir}", f"--output_dir={out}"]
    before = sorted(p.name for p in out.iterdir())
    plumbing = grappler_off_env()
    refused = run_tool(
        "t2t-trainer", *one_host, "--train_steps=4", *flags, timeout=300, env=plumbing
    )
    assert refused.returncode == 1 and "--reshard_on_resume" in refused.stderr
    assert refused.stderr.strip().count("\n") == 0, refused.stderr
    assert sorted(p.name for p in out.iterdir()) == before

    restored_matches(data_dir, out, 2, tmp_path)
    resumed = run_tool(
        "t2t-trainer",
        *one_host,
        "--train_steps=4",
        "--reshard_on_resume",
        *flags,
        timeout=300,
        env=plumbing,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resumed from {out / 'ckpt-2'} at step 2" in resumed.stdout
    assert "the data order continues from a new seed" in resumed.stdout
    assert batch_layout(resumed.stdout) == (1, 2, batch_layout(two[0][1])[2])  # same batch
    assert saved(out / "ckpt-4") == {"micro": 2, "workers": None}

    back = cluster_run.run(
        "worker", data_dir, out, "--train_steps=6", "--reshard_on_resume", *flags
    )
    for code, stdout, stderr in back:
        assert code == 0, stderr[-3000:]
        assert "at step 4" in stdout and "the data order continues from a new seed" in stdout
        assert batch_layout(stdout) == batch_layout(two[0][1])
    assert saved(out / "ckpt-6") == {"micro": 2, "workers": 2}
