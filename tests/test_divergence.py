"""A diverging (not yet NaN) loss stops training like NaN does, with advice that works."""

import pytest
import tensorflow as tf

from t2t_repro.optimizers import make_optimizer
from t2t_repro.training.loop import train_step
from t2t_repro.training.loop.train_step import TrainMetrics, make_train_loop
from tests.model_utils import build_model
from tests.tools import NO_DROPOUT, PLUMBING_MODEL

# The runs check when a diverging loss is flagged and what is said.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


def run_steps(monkeypatch, threshold):
    monkeypatch.setattr(train_step, "DIVERGED_LOSS", threshold)
    model = build_model("transformer_tiny", f"{PLUMBING_MODEL},{NO_DROPOUT}", vocab_size=20)
    optimizer = make_optimizer(model.hparams)
    optimizer.build(model.trainable_variables)
    metrics = TrainMetrics()
    batch = {"inputs": tf.constant([[3, 4, 5, 1]]), "targets": tf.constant([[6, 7, 1]])}
    loop = make_train_loop(tf.distribute.get_strategy(), model, optimizer, model.hparams, metrics)
    metrics.reset()
    loop(iter(tf.data.Dataset.from_tensors(batch).repeat()), tf.constant(3))
    return metrics.read()


@pytest.mark.slow
def test_loss_above_the_threshold_is_flagged_with_its_value(monkeypatch):
    healthy = run_steps(monkeypatch, train_step.DIVERGED_LOSS)
    assert healthy["first_nonfinite"] == -1  # ~ln(20) per token: far below 1000
    # The same finite loss counts as diverged under a threshold below it.
    stats = run_steps(monkeypatch, 1.0)
    assert stats["first_nonfinite"] == 1 and stats["bad_loss"] > 1.0


def test_the_message_names_the_loss_and_a_way_on():
    from t2t_repro.training.loop.run_errors import diverged_error

    message = str(diverged_error({"first_nonfinite": 140, "bad_loss": 3.9e9}, "/run/ckpt-100"))
    assert "diverged (3.9e+09 > 1000 per token) at step 140" in message
    assert "/run/ckpt-100" in message and "rerun in this --output_dir with" in message
    nan = str(diverged_error({"first_nonfinite": 7, "bad_loss": float("nan")}, None))
    assert nan.startswith("Loss became NaN/Inf at step 7.")
