"""The real t2t-trainer as a two-process cluster on loopback (TF_CONFIG), as a user runs it.

Both TF_CONFIG formats, with and without bfloat16 (whose start-up speed probe once made
MultiWorkerMirroredStrategy fail: "Collective ops must be configured at program startup").
Longer drills (kill and resume bit-identically, SIGTERM, time-based saves) are in
``bench/drill_multiworker.py``.
"""

import glob
import os
import re

import pytest

from tests import cluster_run
from tests.test_trainer import data_dir  # noqa: F401 (the toy problem's data, module-scoped)


@pytest.mark.parametrize(
    "fmt, precision", [("worker", ""), ("chief", "--mixed_precision=bfloat16")]
)
def test_two_workers_train_one_model_into_one_dir(data_dir, tmp_path, fmt, precision):  # noqa: F811
    out, tmp = tmp_path / "train", tmp_path / "tmp"
    tmp.mkdir()
    extra = ["--train_steps=12", "--local_eval_frequency=6", "--eval_steps=2", "--random_seed=1"]
    results = cluster_run.run(
        fmt, data_dir, out, *extra, *[precision] * bool(precision), tmp_dir=tmp
    )
    for code, stdout, stderr in results:
        assert code == 0, stderr[-3000:]
        assert "training finished at step 12" in stdout, stdout
    # The same update on both (one model, all-reduced), so the same eval numbers.
    evals = [re.findall(r"eval at step \d+: loss [\d.]+", stdout) for _, stdout, _ in results]
    assert evals[0] == evals[1] and len(evals[0]) == 2, evals
    # One writer: the chief's checkpoints, one event file per writer, no temp dir anywhere.
    names = sorted(os.listdir(out))
    assert [n for n in names if n.startswith("ckpt-")] == [
        "ckpt-12.data-00000-of-00001",
        "ckpt-12.index",
        "ckpt-6.data-00000-of-00001",
        "ckpt-6.index",
    ], names
    assert len(glob.glob(str(out / "events.out.tfevents.*"))) == 1, names
    assert len(glob.glob(str(out / "eval" / "events.out.tfevents.*"))) == 1
    assert {"hparams.json", "flags.txt", "checkpoint"} <= set(names)
    assert not glob.glob(str(out / "*temp*")) and os.listdir(tmp) == []
