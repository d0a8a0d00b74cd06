"""The smoothed loss as T2T computes it."""

import math

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.losses import padded_cross_entropy, smoothing_entropy, token_losses


def test_smoothing_entropy_constants():
    assert smoothing_entropy(32768, 0.1) == pytest.approx(1.3648, abs=1e-4)
    assert smoothing_entropy(33708, 0.1) == pytest.approx(1.3676, abs=1e-4)
    assert smoothing_entropy(37000, 0.1) == pytest.approx(1.3769, abs=1e-4)


def test_perfect_soft_prediction_scores_zero():
    # Logits whose softmax equals the smoothed target: 0.9 on the label, 0.1/3 elsewhere.
    V, eps = 4, 0.1
    probs = np.full(V, eps / (V - 1))
    probs[2] = 1 - eps
    logits = tf.constant(np.log(probs)[None, None], tf.float32)
    loss = token_losses(logits, tf.constant([[2]]), eps)
    assert float(loss[0, 0]) == pytest.approx(0.0, abs=1e-6)


def test_perfect_one_hot_prediction_without_smoothing_scores_zero():
    logits = tf.constant([[[0.0, 0.0, 100.0]]])
    assert float(token_losses(logits, tf.constant([[2]]), 0.0)[0, 0]) == pytest.approx(0, abs=1e-6)


def test_hand_computed_tiny_case():
    # V=3, eps=0.3: soft target for label 1 is [0.15, 0.7, 0.15].
    logits = np.array([1.0, 2.0, 0.5])
    log_p = logits - math.log(sum(math.exp(x) for x in logits))
    soft = np.array([0.15, 0.7, 0.15])
    xent = -(soft * log_p).sum()
    entropy = -(soft * np.log(soft)).sum()
    expected = xent - entropy
    got = token_losses(tf.constant(logits[None, None], tf.float32), tf.constant([[1]]), 0.3)
    assert float(got[0, 0]) == pytest.approx(expected, rel=1e-5)


def test_pad_not_counted_eos_counted():
    logits = tf.random.normal([1, 4, 5], seed=1)
    labels = tf.constant([[3, 2, 1, 0]])  # EOS (1) counts, PAD (0) does not.
    total, count = padded_cross_entropy(logits, labels, 0.1)
    per_token = token_losses(logits, labels, 0.1)
    assert float(count) == 3.0
    assert float(total) == pytest.approx(float(tf.reduce_sum(per_token[0, :3])), rel=1e-6)


def test_gradient_is_softmax_minus_soft_target():
    logits = tf.Variable(tf.random.normal([1, 1, 6], seed=2))
    with tf.GradientTape() as tape:
        loss = token_losses(logits, tf.constant([[4]]), 0.1)
    grad = tape.gradient(loss, logits).numpy()[0, 0]
    soft = np.full(6, 0.1 / 5)
    soft[4] = 0.9
    expected = tf.nn.softmax(logits).numpy()[0, 0] - soft
    np.testing.assert_allclose(grad, expected, atol=1e-6)


@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("jit", [False, True])
def test_written_out_gradient_matches_automatic_differentiation(eps, jit):
    # The textbook soft-target cross entropy, differentiated by TensorFlow.
    V = 7
    logits = tf.Variable(tf.random.normal([2, 3, V], seed=5) * 3)
    labels = tf.constant([[1, 6, 0], [2, 2, 5]])
    weights = tf.constant([[1.0, 0.5, 0.0], [2.0, 1.0, 1.0]])
    soft = tf.one_hot(labels, V, on_value=1 - eps, off_value=eps / (V - 1))

    def both():
        with tf.GradientTape(persistent=True) as tape:
            ours = token_losses(logits, labels, eps)
            plain = -tf.reduce_sum(soft * tf.nn.log_softmax(logits), -1) - smoothing_entropy(V, eps)
            ours_sum, plain_sum = (tf.reduce_sum(ours * weights), tf.reduce_sum(plain * weights))
        return ours, plain, tape.gradient(ours_sum, logits), tape.gradient(plain_sum, logits)

    ours, plain, g_ours, g_plain = (
        tf.function(both, jit_compile=True, autograph=False)() if jit else both()
    )
    np.testing.assert_allclose(ours.numpy(), plain.numpy(), atol=1e-5)
    np.testing.assert_allclose(g_ours.numpy(), g_plain.numpy(), atol=1e-6)


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_gradient_without_the_one_hot_is_the_one_hot_formula_to_the_bit(eps):
    """Outside XLA the gradient subtracts ``low`` everywhere and rewrites the label entries
    instead of building a one-hot: the same subtractions, so the same bits."""
    V = 50
    logits = tf.random.normal([3, 4, V], seed=7) * 3
    labels = tf.constant([[1, 49, 0, 7], [2, 2, 5, 0], [9, 8, 7, 6]])
    confidence, low = 1 - eps, eps / (V - 1)
    log_z = tf.reduce_logsumexp(logits, axis=-1)
    upstream = tf.random.normal([3, 4], seed=8)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = token_losses(logits, labels, eps)
    got = tape.gradient(loss, logits, output_gradients=upstream)
    soft = tf.one_hot(labels, V, on_value=confidence, off_value=low)
    want = upstream[..., None] * (tf.exp(logits - log_z[..., None]) - soft)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_bf16_logits_take_the_fused_path_with_the_float32_math():
    """bf16 logits: the fused XLA kernels give the loss and gradient of the same logits read
    in float32 by the unfused formulas (the fp32 path itself is untouched)."""
    vocab, eps = 50, 0.1
    logits = tf.cast(3 * tf.random.normal([2, 5, vocab], seed=4), tf.bfloat16)
    labels = tf.constant([[3, 7, 1, 0, 0], [49, 2, 2, 1, 0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        fused = token_losses(logits, labels, eps)
        unfused = token_losses(tf.cast(logits, tf.float32), labels, eps)
    assert fused.dtype == tf.float32
    np.testing.assert_allclose(fused.numpy(), unfused.numpy(), rtol=1e-6, atol=1e-6)
    fused_grad = tape.gradient(fused, logits)
    unfused_grad = tape.gradient(unfused, logits)
    assert fused_grad.dtype == tf.bfloat16
    # Within one bf16 rounding: exp differs in XLA's last bits, so the float32 gradients can
    # round to neighbouring bf16 values, one ulp apart = 2**-7 of the value at the bottom of
    # its binade (2**-8 failed on a 1-ulp difference at 3.3e-4 on one core).
    np.testing.assert_allclose(
        tf.cast(fused_grad, tf.float32).numpy(),
        tf.cast(unfused_grad, tf.float32).numpy(),
        rtol=2**-7,
        atol=1e-7,
    )
