"""T2T's pad remover (layers/pad_remover.py): FFN on real tokens, zeros at padding.

The same weights with and without the pad remover must give the same encoder outputs at
real positions and the same logits; at padding the encoder FFN adds nothing, so the encoder
output there is the final LayerNorm of the residual stream. Under XLA (mask instead of
gather) the outputs are the same. In training the decoder's FFNs also skip the positions
after each target's last token, and the ReLU dropout draws the same masks either way.
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.layers.attention import attention_bias_ignore_padding
from t2t_repro.layers.dropout import Dropout
from t2t_repro.layers.feed_forward import DenseReluDense
from t2t_repro.layers.pad_remover import PadRemover
from tests.tools import NO_DROPOUT, TINY_MODEL

IDS = np.array([[5, 9, 3, 1, 0, 0], [7, 1, 0, 0, 0, 0], [4, 4, 8, 2, 6, 1]], np.int32)
TARGETS = np.array([[3, 4, 1, 0], [2, 1, 0, 0], [5, 6, 7, 1]], np.int32)


def twin_models(overrides=""):
    models = []
    for use in (True, False):
        hp = create_hparams(
            "transformer_tiny",
            f"use_pad_remover={use}{overrides}",
            input_vocab_size=12,
            target_vocab_size=12,
        )
        model = registry.model("transformer")(hp)
        model.build()
        models.append(model)
    for a, b in zip(models[0].weights, models[1].weights, strict=True):
        b.assign(a)
    return models


@pytest.fixture(scope="module")
def twins():
    """The default twins, built once for the module (0.5 CPU-s a pair, AMD EPYC Zen 3): the
    tests only read their weights, and a training pass's dropout only moves their seed
    states, which the one test that depends on them sets itself."""
    return twin_models()


@pytest.fixture(scope="module")
def twins_without_dropout():
    """The twins without dropout, built once for the module (as ``twins``)."""
    return twin_models(f",{NO_DROPOUT}")


def test_ffn_output_is_zero_at_padding_and_unchanged_elsewhere():
    ffn = DenseReluDense(16, 8)
    x = tf.random.stateless_normal([3, 6, 8], seed=[1, 2]) + 1.0
    remover = PadRemover.from_padding_bias(attention_bias_ignore_padding(IDS))
    with_remover = ffn(x, pad_remover=remover).numpy()
    plain = ffn(x).numpy()
    pad = IDS == 0
    assert np.abs(plain[pad]).max() > 0.1  # The plain FFN is not zero there...
    np.testing.assert_array_equal(with_remover[pad], 0.0)  # ...the pad remover's is.
    np.testing.assert_allclose(with_remover[~pad], plain[~pad], atol=1e-6, rtol=0)


def test_encoder_and_logits_equal_at_real_positions(twins):
    removing, plain = twins
    enc_a, _ = removing.encode(tf.constant(IDS))
    enc_b, _ = plain.encode(tf.constant(IDS))
    pad = IDS == 0
    np.testing.assert_allclose(enc_a.numpy()[~pad], enc_b.numpy()[~pad], atol=1e-5, rtol=0)
    assert np.abs(enc_a.numpy()[pad] - enc_b.numpy()[pad]).max() > 1e-3
    features = {"inputs": IDS, "targets": TARGETS}
    np.testing.assert_allclose(
        removing(features).numpy(), plain(features).numpy(), atol=1e-5, rtol=0
    )


def test_xla_mask_mode_equals_gather_mode(twins):
    removing, _ = twins
    eager, _ = removing.encode(tf.constant(IDS))
    compiled, _ = tf.function(removing.encode, jit_compile=True)(tf.constant(IDS))
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), atol=1e-5, rtol=0)


def test_training_equals_inference_without_dropout_at_real_tokens(twins_without_dropout):
    """Without dropout a training pass of the encoder is the inference pass at real tokens;
    training runs the whole stack on the real tokens' rows, so its output at padding is 0."""
    removing, plain = twins_without_dropout
    trained, _ = removing.encode(tf.constant(IDS), training=True)
    inferred, _ = removing.encode(tf.constant(IDS), training=False)
    real = IDS != 0
    np.testing.assert_allclose(trained.numpy()[real], inferred.numpy()[real], atol=1e-5, rtol=0)
    np.testing.assert_array_equal(trained.numpy()[~real], 0.0)
    unmasked, _ = plain.encode(tf.constant(IDS), training=True)
    np.testing.assert_allclose(trained.numpy()[real], unmasked.numpy()[real], atol=1e-5, rtol=0)
    assert np.abs(unmasked.numpy()[~real]).max() > 1e-3


def test_training_gradients_flow_through_the_pad_remover(twins):
    removing, _ = twins
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(removing({"inputs": IDS, "targets": TARGETS}, training=True) ** 2)
    kernel = removing.encoder.layer_0.ffn.sublayer.conv1.kernel
    grad = tape.gradient(loss, kernel)
    assert grad is not None and np.isfinite(grad.numpy()).all() and np.abs(grad).max() > 0


def _seed_states(model):
    return [(v, v.numpy()) for v in model.variables if "seed_generator_state" in v.path]


def test_dropout_draws_the_full_shapes_mask_for_gathered_rows():
    dropout = Dropout(0.3)
    dropout.build((None, 8))
    full = tf.random.stateless_normal([3, 6, 8], seed=[5, 6]) + 2.0
    remover = PadRemover.from_padding_bias(attention_bias_ignore_padding(IDS))
    ((state, start),) = _seed_states(dropout)
    whole = dropout(full, training=True).numpy().reshape(-1, 8)
    state.assign(start)
    rows = dropout(remover.remove(full), training=True, rows=remover).numpy()
    np.testing.assert_array_equal(rows, whole[IDS.reshape(-1) != 0])
    assert 0 < np.mean(rows == 0) < 0.6  # Some, not all, dropped.


def test_decoder_keeps_every_position_up_to_the_last_token():
    ids = tf.constant([[3, 0, 4, 1, 0, 0], [5, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    remover = PadRemover.after_last_token(ids)
    # A PAD before a real token is kept (a later real position attends to it).
    np.testing.assert_array_equal(remover.indices.numpy()[:, 0], [0, 1, 2, 3, 6, 7])

    @tf.function(jit_compile=True)
    def off_under_xla(ids):  # Shapes are static there: no gather.
        return tf.constant(PadRemover.after_last_token(ids) is None)

    assert off_under_xla(ids).numpy()


def assert_training_pass_is_unchanged_at_every_target_position(removing, plain):
    """Same weights and dropout states, pad remover on and off: the training logits agree at
    every real target (and the loss); only the trailing padding's logits differ."""
    assert removing.hparams.relu_dropout > 0
    features = {"inputs": IDS, "targets": TARGETS}
    states = _seed_states(removing)
    with_remover = removing(features, training=True).numpy()
    for (state, start), (twin, _) in zip(states, _seed_states(plain), strict=True):
        state.assign(start)
        twin.assign(start)
    again = removing(features, training=True).numpy()
    without = plain(features, training=True).numpy()
    np.testing.assert_array_equal(again, with_remover)  # Deterministic from the states.
    real = TARGETS != 0
    np.testing.assert_allclose(with_remover[real], without[real], atol=1e-5, rtol=0)
    assert np.abs(with_remover[~real] - without[~real]).max() > 1e-3


def test_decoder_training_pass_is_unchanged_at_every_target_position(twins):
    assert_training_pass_is_unchanged_at_every_target_position(*twins)


def test_broadcast_dims_reach_each_dropout_and_the_rows_draw_the_full_masks():
    """T2T's dropout broadcast dims (#53): the attention weights', the ReLU's and every
    pre/post-process 'd' step's dropout share their masks along them (the embedding's plain
    ``tf.nn.dropout`` does not, as in T2T), and the kept rows still draw the full pass's."""
    dims = (
        ",attention_dropout_broadcast_dims=1,relu_dropout_broadcast_dims=1"
        ",layer_prepostprocess_dropout_broadcast_dims=-2"
    )
    removing, plain = twin_models(f",{TINY_MODEL}{dims}")
    for stack in (removing.encoder, removing.decoder):
        layer = stack.layer_0
        assert layer.self_attention.sublayer.weights_dropout.broadcast_dims == (1,)
        assert layer.ffn.sublayer.dropout.broadcast_dims == (1,)
        for step in (layer.self_attention.post, layer.ffn.pre, layer.ffn.post, stack.final):
            assert step.dropout.broadcast_dims == (-2,)
    assert removing.decoder.layer_0.encdec_attention.sublayer.weights_dropout.broadcast_dims
    assert removing.embedding_dropout.broadcast_dims == ()
    assert_training_pass_is_unchanged_at_every_target_position(removing, plain)


@pytest.mark.slow
def test_decoder_pad_remover_is_off_under_xla(twins_without_dropout):
    removing, _ = twins_without_dropout
    features = {"inputs": tf.constant(IDS), "targets": tf.constant(TARGETS)}
    eager = removing(features, training=True).numpy()
    compiled = tf.function(lambda f: removing(f, training=True), jit_compile=True)(features)
    real = TARGETS != 0
    np.testing.assert_allclose(compiled.numpy()[real], eager[real], atol=1e-5, rtol=0)


def test_remove_and_restore_move_rows_and_gradients_exactly():
    remover = PadRemover.after_last_token(tf.constant(TARGETS))
    x = tf.Variable(tf.random.stateless_normal([3, 4, 5], seed=[3, 4]))
    upstream = tf.random.stateless_normal([3, 4, 5], seed=[5, 6])
    kept = (np.arange(4)[None, :] <= np.array([2, 1, 3])[:, None]).reshape(-1)
    with tf.GradientTape() as tape:
        rows = remover.remove(x)
        back = remover.restore(rows * 2.0)
        loss = tf.reduce_sum(back * upstream)
    np.testing.assert_array_equal(rows.numpy(), x.numpy().reshape(-1, 5)[kept])
    flat_back = back.numpy().reshape(-1, 5)
    np.testing.assert_array_equal(flat_back[kept], 2.0 * x.numpy().reshape(-1, 5)[kept])
    np.testing.assert_array_equal(flat_back[~kept], 0.0)
    grad = tape.gradient(loss, x).numpy().reshape(-1, 5)
    np.testing.assert_array_equal(grad[kept], 2.0 * upstream.numpy().reshape(-1, 5)[kept])
    np.testing.assert_array_equal(grad[~kept], 0.0)


@pytest.mark.parametrize("gather", [True, False])
def test_restore_split_is_restore_with_its_last_axis_split(gather):
    """Attention's heads from kept rows (``restore_split``): restore's values and gradients
    bit for bit, in one reshape whose shape a stack's queries, keys and values share."""
    keep = tf.constant(np.arange(4)[None, :] <= np.array([2, 1, 3])[:, None])
    remover = PadRemover(keep, gather=gather)
    rows = tf.Variable(tf.random.stateless_normal([3 * 4, 6], seed=[7, 8]))
    if gather:
        rows = tf.Variable(remover.remove(rows))
    upstream = tf.random.stateless_normal([3, 4, 2, 3], seed=[9, 10])
    grads = []
    for split in (
        lambda y: tf.reshape(remover.restore(y), [3, 4, 2, 3]),
        lambda y: remover.restore_split(y, 2),
    ):
        with tf.GradientTape() as tape:
            x = rows if gather else tf.reshape(rows, [3, 4, 6])
            heads = split(x * 1.0)
            loss = tf.reduce_sum(heads * upstream)
        grads.append((heads.numpy(), tape.gradient(loss, rows).numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
    if gather:  # the heads' shape is built once for every split of the same width
        assert remover.restore_split(rows, 2).shape.as_list() == [3, 4, 2, 3]
        assert len(remover._split_shapes) == 1


def test_heads_combined_flat_are_the_combined_rows():
    """What attention hands a ``PadRemover``'s ``remove``: ``combine_heads``' [B, L, h*d] as
    [B*L, h*d] rows, in one reshape."""
    from t2t_repro.layers.attention import combine_heads, combine_heads_flat

    x = tf.random.stateless_normal([3, 2, 4, 5], seed=[11, 12])
    flat = combine_heads_flat(x)
    assert flat.shape == (12, 10)
    np.testing.assert_array_equal(flat.numpy(), combine_heads(x).numpy().reshape(12, 10))
