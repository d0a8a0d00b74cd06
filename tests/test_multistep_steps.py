"""``optimizer_multistep_accumulate_steps`` with T2T 1.15.7's meaning everywhere (#53).

T2T divides the schedule's global step by it whatever the optimizer (``utils/learning_rate.py,
_global_step``), but only ``multistep_adam`` accumulates (``utils/optimize.py``); T2T's global
step counts batches, so under ``multistep_adam`` ``--train_steps`` and the checkpoint names
count batches. A run saved when ``adam`` accumulated is refused, not resumed with another
meaning. The update rules themselves: ``test_t2t_optimizers.py``.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.learning_rate import T2TSchedule, learning_rate_at, t2t_steps_per_update
from t2t_repro.training.loop import step_count
from t2t_repro.training.run_setup import TrainingError
from tests.model_utils import shared_toy_data
from tests.tools import TINY_PLUMBING

# The runs below check step counts, checkpoints and messages.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.fixture(scope="module")
def data_dir():
    return shared_toy_data()  # read only: made once for the test run


def test_only_multistep_adam_accumulates():
    assert t2t_steps_per_update("multistep_adam", 8) == 8
    assert t2t_steps_per_update("MultistepAdam", 8) == 8  # T2T's registry spelling
    assert t2t_steps_per_update("multistep_adam", 0) == 1
    for optimizer in ("adam", "Adam", "adafactor", "sgd", "true_adam"):
        assert t2t_steps_per_update(optimizer, 8) == 1


def test_adam_with_accumulate_steps_updates_every_batch_at_the_divided_step():
    """Every batch is an update; the schedule sees T2T's global step (the updates) over n.
    n = 4 divides exactly in float32, so the rate is that of the step u/4 undivided."""
    values = registry.hparams("transformer_base").values()
    adam = dict(values, optimizer="adam", optimizer_multistep_accumulate_steps=4)
    schedule = T2TSchedule(adam)
    for update in (0, 1, 999, 16001, 123456):
        expected = learning_rate_at(update / 4, dict(adam, optimizer_multistep_accumulate_steps=0))
        assert float(schedule(tf.constant(update, tf.int64))) == float(expected)
    # multistep_adam applies update u at T2T's global step 4u + 3 (test_learning_rate_t2t.py)
    multistep = dict(adam, optimizer="multistep_adam")
    assert float(T2TSchedule(multistep)(tf.constant(999, tf.int64))) == float(
        learning_rate_at(999 * 4 + 3, multistep)
    )


def test_loop_calls_end_at_the_first_update_boundary_after_an_event():
    # 8 batches per update from T2T step 16: the log line every 100 steps comes at 104
    assert step_count.updates_to_next_event(16, 8, 800, 1000, (100, 0, 0)) == 11
    assert step_count.updates_to_next_event(96, 8, 800, 1000, (100, 1000, 0)) == 1
    assert step_count.updates_to_next_event(0, 8, 800, 20, (100,)) == 3  # steps_per_loop: 20
    assert step_count.updates_to_next_event(7, 1, 10, 20, (5, 0)) == 3  # one a batch: exact
    assert step_count.crossed(96, 104, 100) and not step_count.crossed(104, 112, 100)
    assert step_count.crossed(99, 100, 100) and not step_count.crossed(100, 101, 100)
    assert not step_count.crossed(0, 8, 0)
    step_count.check_train_steps(8, 48)
    step_count.check_train_steps(1, 7)
    with pytest.raises(TrainingError, match=r"^--train_steps=50 counts batches.*multiple of 8"):
        step_count.check_train_steps(8, 50)
    # train_eval_and_decode ends its training after a round of --local_eval_frequency steps
    freq = "--local_eval_frequency"
    with pytest.raises(TrainingError, match=rf"^{freq}=5 counts batches.*multiple of 4"):
        step_count.check_train_steps(4, 5, freq)


def test_a_checkpoint_saved_before_the_meaning_changed():
    args = ("out/ckpt-5", 0, 5)
    with pytest.raises(TrainingError, match="made optimizer='adam' accumulate 2 batches") as e:
        step_count.restored_meaning(*args, 1, "adam", 2)
    assert "\n" not in str(e.value) and "optimizer=multistep_adam" in str(e.value)
    note = step_count.restored_meaning(*args, 4, "multistep_adam", 4)
    assert "its 5 updates are T2T step 20" in note
    assert step_count.restored_meaning(*args, 1, "adam", 0) == ""  # nothing accumulated
    assert step_count.restored_meaning("out/ckpt-5", 1, 5, 1, "adam", 2) == ""  # saved since


def _train(data_dir, out, hparams, train_steps):
    from t2t_repro.commands import trainer

    return trainer.main(
        [
            "--problem=translate_toy",
            "--hparams_set=transformer_quickstart",
            f"--data_dir={data_dir}",
            f"--output_dir={out}",
            "--schedule=train",
            "--random_seed=1",
            f"--hparams={TINY_PLUMBING},{hparams}",
            f"--train_steps={train_steps}",
        ]
    )


def _saved(prefix) -> dict:
    reader = tf.train.load_checkpoint(str(prefix))
    names = {
        "updates": "optimizer/_iterations",
        "steps_per_update": "steps_per_update",
        "micro": "micro_batches_per_update",
    }
    shapes = reader.get_variable_to_shape_map()
    found = {}
    for key, name in names.items():
        full = f"{name}/.ATTRIBUTES/VARIABLE_VALUE"
        found[key] = int(np.asarray(reader.get_tensor(full))) if full in shapes else None
    return found


@pytest.mark.slow
def test_steps_count_batches_and_runs_saved_before_are_told_or_refused(
    data_dir, tmp_path, monkeypatch, capsys
):
    """A checkpoint without the record of steps_per_update is what runs saved before #53's
    change left: a multistep_adam one resumes with a note, an adam one that accumulated is
    refused before anything is written."""
    from t2t_repro.checkpoints.training import TrainingCheckpoint

    multistep = "optimizer=multistep_adam,optimizer_multistep_accumulate_steps=2"
    out = tmp_path / "multistep"
    with monkeypatch.context() as patch:
        patch.setattr(TrainingCheckpoint, "_attach_steps_per_update", lambda self: None)
        assert _train(data_dir, out, multistep, 2) == 0  # 1 update of 2 batches
    assert _saved(out / "ckpt-2") == {"updates": 1, "steps_per_update": None, "micro": 2}
    # The same weights and Adam slots as a run with optimizer=adam would have saved.
    old = tmp_path / "adam"
    shutil.copytree(out, old)
    saved = json.loads((old / "hparams.json").read_text(encoding="utf-8"))
    (old / "hparams.json").write_text(json.dumps(dict(saved, optimizer="adam")), "utf-8")
    before = {p: os.stat(old / p).st_mtime_ns for p in os.listdir(old)}
    capsys.readouterr()
    assert _train(data_dir, old, "optimizer_multistep_accumulate_steps=2", 4) != 0
    errors = capsys.readouterr().err
    assert "now only divides the learning-rate schedule's step" in errors, errors
    assert {p: os.stat(old / p).st_mtime_ns for p in os.listdir(old)} == before
    # multistep_adam: --train_steps=4 is 2 updates; the resumed update 1 is T2T's step 2
    assert _train(data_dir, out, multistep, 4) == 0
    assert "its 1 updates are T2T step 2" in capsys.readouterr().out
    assert _saved(out / "ckpt-4") == {"updates": 2, "steps_per_update": 2, "micro": 2}
