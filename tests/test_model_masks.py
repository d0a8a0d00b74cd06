"""Padding and causal masks: what a position may not see cannot change its logits."""

import numpy as np
import pytest
import tensorflow as tf

from tests.model_utils import build_model


@pytest.mark.parametrize("hparams_set", ["transformer_base_v1", "transformer_base_v3"])
def test_extra_source_padding_changes_no_real_logit(hparams_set):
    # Post-norm (paper) and pre-norm (T2T v3) at a small size.
    model = build_model(
        hparams_set, "hidden_size=32,filter_size=64,num_heads=4,num_hidden_layers=2"
    )
    targets = tf.constant([[4, 9, 3, 1], [7, 1, 0, 0]])
    short = tf.constant([[5, 6, 7, 1, 0], [8, 1, 0, 0, 0]])
    long = tf.pad(short, [[0, 0], [0, 6]])
    a = model({"inputs": short, "targets": targets})
    b = model({"inputs": long, "targets": targets})
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


def test_pad_embeds_to_zero_and_other_ids_do_not():
    model = build_model("transformer_tiny")
    emb = model.input_embedding(tf.constant([[0, 3]])).numpy()
    assert np.all(emb[0, 0] == 0.0)
    assert np.abs(emb[0, 1]).sum() > 0


def test_future_targets_change_no_earlier_logit():
    model = build_model("transformer_tiny")
    inputs = tf.constant([[5, 6, 7, 1]])
    t1 = tf.constant([[4, 9, 3, 11, 1]])
    t2 = tf.constant([[4, 9, 30, 2, 17]])  # Differs from position 2 on.
    a = model({"inputs": inputs, "targets": t1}).numpy()
    b = model({"inputs": inputs, "targets": t2}).numpy()
    # Logits at position p depend on targets < p (shift right), so positions 0..2 agree.
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-5)
    assert np.abs(a[:, 3:] - b[:, 3:]).max() > 1e-4


def test_source_content_does_change_logits():
    # Guards the tests above against a model that ignores its inputs.
    model = build_model("transformer_tiny")
    targets = tf.constant([[4, 9, 3, 1]])
    a = model({"inputs": tf.constant([[5, 6, 7, 1]]), "targets": targets}).numpy()
    b = model({"inputs": tf.constant([[5, 6, 8, 1]]), "targets": targets}).numpy()
    assert np.abs(a - b).max() > 1e-4


def test_shift_right_is_t2ts_pad_and_slice_with_its_gradient():
    from t2t_repro.models.transformer import shift_right

    x = tf.Variable(tf.random.stateless_normal([3, 5, 4], seed=[7, 8]))
    upstream = tf.random.stateless_normal([3, 5, 4], seed=[9, 10])
    grads = []
    for shift in (shift_right, lambda y: tf.pad(y, [[0, 0], [1, 0], [0, 0]])[:, :-1]):
        with tf.GradientTape() as tape:
            out = shift(x)
            loss = tf.reduce_sum(out * upstream)
        grads.append((out.numpy(), tape.gradient(loss, x).numpy()))
    (out_a, grad_a), (out_b, grad_b) = grads
    np.testing.assert_array_equal(out_a, out_b)
    np.testing.assert_array_equal(out_a[:, 0], 0.0)
    np.testing.assert_array_equal(out_a[:, 1:], x.numpy()[:, :-1])
    np.testing.assert_array_equal(grad_a, grad_b)
    np.testing.assert_array_equal(grad_a[:, -1], 0.0)
