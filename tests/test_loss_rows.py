"""The training loss computed at non-PAD targets only (``losses.padded_cross_entropy_of_hidden``,
``training.loop.train_step.batch_loss_sums``) equals the full-grid loss to float32 rounding.

The vocabulary projection and the loss are computed on the gathered rows of real targets;
the per-token losses go back on the [B, L] grid before the sum. Each row's logits do not
depend on the other rows, so the loss, the token count and the gradients are the full
computation's; but the projection is a matmul of another shape (fewer rows), and oneDNN and
Eigen choose a kernel, and so each dot product's summation order, by CPU and by shape: on
AMD EPYC the two agree to the bit, on an Intel Xeon with AMX the loss of the model test below
differed in its last bit. So the claims are equality within a bound derived from the
computation (``tests/float_bounds.py``); the token count, an exact sum of ones, is exact.
"""

import keras
import numpy as np
import tensorflow as tf

from t2t_repro.losses import padded_cross_entropy, padded_cross_entropy_of_hidden
from t2t_repro.training.loop.train_step import batch_loss_sums
from tests.float_bounds import (
    chain_relative_bound,
    gamma,
    matmul_difference_bound,
    sum_difference_bound,
)
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


def projection_loss_bounds(hidden, table, labels) -> tuple[float, np.ndarray, np.ndarray]:
    """Bounds on |total_a - total_b| and, elementwise, on the gradients' differences (hidden,
    table) for two float32 evaluations of the summed loss of ``hidden @ table^T`` at non-PAD
    ``labels``.

    Each logit is a d-term dot product (``matmul_difference_bound``). A token's loss,
    log Z - sum_j soft_j z_j, moves by at most 2 max_j |dz_j| (its derivative, softmax - soft,
    has an l1 norm of at most 2) and its own evaluation (V exponentials, two V-term sums) rounds
    within 2 gamma(V + 2) (|log Z| + 2 max|z|); the grid's sum adds ``sum_difference_bound``.
    The hidden gradient (softmax - soft) @ table moves with the softmax (|dp_j| <= 2 p_j max|dz|
    plus its own rounding) and rounds as a V-term dot product; the table's, (softmax - soft)^T
    @ hidden, likewise with the softmax's bound and an N-row sum."""
    h = np.asarray(hidden, np.float64).reshape(-1, table.shape[-1])
    w = np.asarray(table, np.float64)
    vocab = w.shape[0]
    keep = np.asarray(labels).reshape(-1) != 0
    z = h @ w.T
    dz = matmul_difference_bound(h, w.T).max(-1)  # [N]
    log_z = np.logaddexp.reduce(z, axis=-1)
    magnitude = np.abs(log_z) + 2 * np.abs(z).max(-1)
    per_token = 2 * dz + 2 * gamma(vocab + 2) * magnitude
    total = per_token[keep].sum() + sum_difference_bound(magnitude[keep])
    p = np.exp(z - log_z[:, None])
    dp = 2 * p * (dz + 2 * gamma(vocab + 2) * (1 + np.abs(z).max(-1)))[:, None]
    dh = dp @ np.abs(w) + matmul_difference_bound(np.abs(p) + 1, w)
    g = (np.abs(p) + 1) * keep[:, None]  # |softmax - soft| <= p + 1 at kept rows, 0 at PAD
    dt = (dp * keep[:, None]).T @ np.abs(h) + matmul_difference_bound(g.T, h)
    return total, (dh * keep[:, None]).reshape(np.shape(hidden)), dt


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


def test_rows_only_loss_is_the_full_loss_to_float32_rounding():
    for seed, smoothing in ((1, 0.1), (2, 0.0), (3, 0.2)):
        hidden, table = _hidden_and_table(seed)
        (total_a, count_a, dh_a, dt_a), (total_b, count_b, dh_b, dt_b) = _both(
            hidden, table, smoothing
        )
        loss_bound, dh_bound, dt_bound = projection_loss_bounds(
            hidden.numpy(), table.numpy(), LABELS
        )
        assert total_a > 0 and abs(float(total_a) - float(total_b)) <= loss_bound
        assert loss_bound < 1e-3 * total_a  # the bound is tight enough to mean something
        assert count_a == count_b == np.count_nonzero(LABELS)
        # The decoder's gradient: equal to rounding, and exactly 0 at PAD targets on both paths.
        assert np.all(np.abs(dh_a.astype(np.float64) - dh_b) <= dh_bound)
        assert not np.any(dh_a[LABELS == 0]) and not np.any(dh_b[LABELS == 0])
        assert np.all(np.abs(dh_a[LABELS != 0]).sum(-1) > 0)
        assert np.all(np.abs(dt_a.astype(np.float64) - dt_b) <= dt_bound)


def test_rows_only_under_tf_function_and_xla():
    hidden, table = _hidden_and_table(4)

    def loss(h):
        return padded_cross_entropy_of_hidden(h, _projection(table), LABELS, 0.1)[0]

    eager = loss(hidden).numpy()
    # A graph (its rewrites, oneDNN's graph kernels) and XLA (the full grid: the row count is not
    # static there) are other computations of the same loss: equal to rounding.
    bound, _, _ = projection_loss_bounds(hidden.numpy(), table.numpy(), LABELS)
    assert abs(float(tf.function(loss, autograph=False)(hidden).numpy()) - float(eager)) <= bound
    assert (
        abs(
            float(tf.function(loss, jit_compile=True, autograph=False)(hidden).numpy())
            - float(eager)
        )
        <= bound
    )


def test_batch_loss_sums_is_the_models_full_loss_with_dropout():
    """The trainer's loss of a batch in training mode (dropout on) is the full-logits loss
    to float32 rounding, when both draw the same dropout masks (same seed-generator states):
    the decoder's pass is the same computation, the projection and loss another."""
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
    for v, s in zip(seeds, start, strict=True):
        v.assign(s)
    hidden = model.decoder_output(batch, training=True)  # what both projected: same masks
    bound, _, _ = projection_loss_bounds(hidden.numpy(), model.softmax.embeddings.numpy(), targets)
    assert abs(float(rows_total.numpy()) - float(full_total.numpy())) <= bound
    assert rows_count.numpy() == np.count_nonzero(targets)
    assert_gradients_close(rows_grads, full_grads, model.hparams, targets.shape)


def kept_rows_loss_rtol(hp, source_length: int, target_length: int) -> float:
    """Relative bound on two evaluations of the training loss by the stacks on kept rows and
    on every position: each row's value goes through the same contractions on both paths, of
    the lengths below, each summed in an order that may differ with the matmul's row count."""
    d, depth = hp.hidden_size, hp.hidden_size // hp.num_heads
    ffn = [d, hp.filter_size]
    encoder = [d, depth, source_length, d, *ffn]  # Q/K/V, scores, weights @ V, output, FFN
    decoder = [d, depth, target_length, d, d, depth, source_length, d, *ffn]
    encoder_layers = hp.num_encoder_layers or hp.num_hidden_layers  # 0: num_hidden_layers
    decoder_layers = hp.num_decoder_layers or hp.num_hidden_layers
    return chain_relative_bound(
        encoder * encoder_layers + decoder * decoder_layers + [d, hp.target_vocab_size]
    )


def assert_gradients_close(grads_a, grads_b, hp, shape: tuple[int, int]) -> None:
    """Each weight's gradient on the two paths, equal to the rounding of the backward pass:
    the forward chain again (``kept_rows_loss_rtol``) and a sum over the batch's rows, relative
    to the tensor's largest element (a weight's gradient sums terms of either sign, so an
    element near 0 carries the rounding of its larger terms: seen under oneDNN's SSE4.1
    kernels, an embedding-gradient element of -0.0566 an absolute 1.7e-6 apart)."""
    rows = shape[0] * shape[1]
    rtol = 2 * kept_rows_loss_rtol(hp, shape[1], shape[1]) + 2 * gamma(rows)
    for a, b in zip(grads_a, grads_b, strict=True):
        a, b = tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy()
        scale = np.abs(b).max()
        np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


def test_training_on_kept_rows_is_the_full_computation_to_float32_rounding():
    """``use_pad_remover`` on (both stacks on kept rows, the loss on non-PAD targets) and off
    (every position): same weights and dropout states, the same training loss to float32
    rounding, the gradients too (they also sum fewer zero rows). On AMD EPYC the losses are
    equal to the bit; on an Intel Xeon with AMX, where oneDNN took another kernel for the
    kept rows' matmuls, they differed by one ulp (262.63522 against 262.63525).

    Seeded, so the weights do not depend on the order the test processes run tests in (for
    3 of 12 seeds two embedding-gradient elements once differed by ~1.8e-6, 4.8e-5 relative:
    what a fixed rtol of 1e-5 refused, and the normwise bound of ``assert_gradients_close``
    covers)."""
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
    hp = twins[0].hparams
    rtol = kept_rows_loss_rtol(hp, LABELS.shape[1], LABELS.shape[1])
    assert rtol < 1e-3  # a loss an ulp or a bug apart: the bound tells them apart
    np.testing.assert_allclose(total_a, total_b, rtol=rtol, atol=0)
    assert count_a == count_b == np.count_nonzero(LABELS)
    assert_gradients_close(grads_a, grads_b, hp, LABELS.shape)
