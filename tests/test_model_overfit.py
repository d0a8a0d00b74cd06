"""A transformer_test-sized model must be able to memorise one batch."""

import pytest
import tensorflow as tf

from t2t_repro.losses import padded_cross_entropy
from t2t_repro.optimizers import make_optimizer
from tests.model_utils import build_model
from tests.tools import NO_DROPOUT


@pytest.mark.slow
# Memorisation, not T2T's numbers: without Grappler (tests/grappler.py; the first call
# 1.6-2.0 CPU-s against 2.0-2.1 with it).
@pytest.mark.usefixtures("without_grappler_here")
def test_overfits_one_batch():
    tf.random.set_seed(0)
    overrides = (
        f"hidden_size=32,filter_size=64,{NO_DROPOUT},label_smoothing=0.0,"
        "learning_rate_schedule=constant,learning_rate_constant=0.01"
    )
    model = build_model("transformer_test", overrides, vocab_size=20)
    optimizer = make_optimizer(model.hparams)
    # Built here, as the trainer builds it: Adam's slots created on the step's first call made
    # tf.function trace the step twice (~3 s of the test's ~4; the 300 steps take ~1.4 s).
    optimizer.build(model.trainable_variables)
    batch = {
        "inputs": tf.constant([[3, 4, 5, 6, 1], [7, 8, 9, 1, 0]]),
        "targets": tf.constant([[6, 5, 4, 3, 1], [9, 8, 7, 1, 0]]),
    }

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            total, count = padded_cross_entropy(model(batch, training=True), batch["targets"])
            loss = total / count
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    first = float(step())
    # Below a tenth of the first loss after 7-13 steps (seeds 0-2, AMD EPYC Zen 4), 5e-4 to
    # 8e-4 of it after 60: a wide margin.
    for _ in range(60):
        last = float(step())
    assert last < 0.1 * first, (first, last)
