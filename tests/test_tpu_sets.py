"""T2T's TPU sets (hparams/transformer_tpu.py, #53) train here: Adafactor with the dropout
broadcast dims, in the project's own update step. Their values are T2T's
(``tests/test_t2t_sets.py``); the broadcast masks are checked in ``tests/test_dropout.py`` and
``tests/test_pad_remover.py``."""

import numpy as np
import tensorflow as tf

from t2t_repro.optimizers import make_optimizer
from t2t_repro.training.loop.train_step import make_replica_update
from tests.model_utils import build_model
from tests.tools import TINY_MODEL


def test_transformer_tiny_tpu_takes_training_steps():
    model = build_model("transformer_tiny_tpu", TINY_MODEL, vocab_size=20)
    hp = model.hparams
    assert (hp.optimizer, hp.relu_dropout_broadcast_dims) == ("Adafactor", "1")
    optimizer = make_optimizer(hp)
    optimizer.build(model.trainable_variables)
    before = [v.numpy() for v in model.trainable_variables]
    batch = {
        "inputs": tf.constant([[3, 4, 5, 1], [6, 1, 0, 0]]),
        "targets": tf.constant([[6, 7, 1], [8, 1, 0]]),
    }
    update = make_replica_update(model, optimizer, hp, num_replicas=1)  # eager: no trace
    stats = update(batch)
    assert np.isfinite(stats["loss"].numpy()) and stats["target_tokens"].numpy() == 5
    moved = [
        not np.array_equal(a, v.numpy())
        for a, v in zip(before, model.trainable_variables, strict=True)
    ]
    assert all(moved)
