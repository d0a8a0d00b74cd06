"""The 16-bit-mask dropout layer (t2t_repro/layers/dropout.py), and T2T's broadcast dims
(``tensor2tensor/layers/common_layers.py, dropout_with_broadcast_dims``: the mask has size 1
along the listed dimensions, negative ones counted from the end, out-of-range ones ignored)."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.attention import attention_bias_ignore_padding
from t2t_repro.layers.dropout import Dropout, SymbolDropout, kept_and_scaled, parse_broadcast_dims
from t2t_repro.layers.pad_remover import PadRemover
from tests.float_bounds import assert_same_bits
from tests.model_utils import build_model, traced_op_count
from tests.test_loss_rows import kept_rows_loss_rtol


def test_inference_and_rate_zero_are_identity():
    x = tf.random.normal([4, 8])
    np.testing.assert_array_equal(Dropout(0.3)(x, training=False).numpy(), x.numpy())
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True).numpy(), x.numpy())


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_drop_fraction_and_scaling(rate):
    n = 1 << 20
    y = Dropout(rate, seed=3)(tf.ones([n // 512, 512]), training=True).numpy()
    dropped = float((y == 0).mean())
    # Binomial standard deviation is sqrt(rate (1 - rate) / n) < 5e-4; allow 5 of them.
    assert abs(dropped - rate) < 2.5e-3
    np.testing.assert_allclose(np.unique(y[y != 0]), [1 / (1 - rate)], rtol=1e-6)


def test_odd_sizes_and_float16():
    y = Dropout(0.5, seed=1, dtype="mixed_float16")(tf.ones([3, 5], tf.float16), training=True)
    assert y.dtype == tf.float16 and y.shape == (3, 5)
    assert set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}


def test_masks_follow_the_seed_generator_state():
    layer = Dropout(0.5, seed=7)
    x = tf.ones([64, 64])
    state = layer.seed_generator.state.numpy()
    first = layer(x, training=True).numpy()
    second = layer(x, training=True).numpy()
    assert not np.array_equal(first, second)  # the state advances per call
    layer.seed_generator.state.assign(state)  # what restoring a checkpoint does
    np.testing.assert_array_equal(layer(x, training=True).numpy(), first)


def test_same_mask_in_graph_xla_and_dynamic_shapes():
    x = tf.random.normal([6, 40])
    masks = []
    for fn in (
        lambda drop, t: drop(t, training=True),
        tf.function(lambda drop, t: drop(t, training=True), jit_compile=True, autograph=False),
        tf.function(lambda drop, t: drop(t, training=True), autograph=False),
    ):
        layer = Dropout(0.25, seed=11)
        masks.append(fn(layer, x).numpy() != 0)
    layer = Dropout(0.25, seed=11)
    dynamic = tf.function(
        lambda t: layer(t, training=True),
        input_signature=[tf.TensorSpec([None, 40])],
        autograph=False,
    )
    masks.append(dynamic(x).numpy() != 0)
    for m in masks[1:]:
        np.testing.assert_array_equal(m, masks[0])


def test_noise_shape_is_refused():
    with pytest.raises(ValueError, match="broadcast_dims, not noise_shape"):
        Dropout(0.1, noise_shape=(1, 4))


def test_broadcast_dims_parse_as_t2ts_comma_separated_integers():
    # T2T's comma_separated_string_to_integer_list: int() of each non-empty piece
    assert parse_broadcast_dims("x", "0,1") == (0, 1)
    assert parse_broadcast_dims("x", "") == ()
    assert parse_broadcast_dims("x", "-1, 2,") == (-1, 2)
    with pytest.raises(ValueError, match=r"^x='0;1' is not a comma-separated list") as e:
        parse_broadcast_dims("x", "0;1")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("shape,dims", [((6, 5, 8), (1,)), ((3, 4, 5, 6), (0, 1))])
def test_broadcast_dims_share_one_decision_along_those_dims(shape, dims):
    """T2T's TPU sets: "1" (length) on [B, L, d], "0,1" (batch, heads) on attention weights."""
    rate = 0.5
    y = Dropout(rate, dims, seed=2)(tf.ones(shape), training=True).numpy()
    assert y.shape == shape
    keep = y != 0
    first = keep[tuple(slice(0, 1) if i in dims else slice(None) for i in range(len(shape)))]
    np.testing.assert_array_equal(keep, np.broadcast_to(first, shape))  # constant along dims
    assert 0 < first.mean() < 1  # while the other dimensions still vary
    np.testing.assert_allclose(np.unique(y[keep]), [1 / (1 - rate)], rtol=1e-6)
    # a negative dim is the same dim counted from the end: the same draws
    negative = tuple(d - len(shape) for d in dims)
    again = Dropout(rate, negative, seed=2)(tf.ones(shape), training=True).numpy()
    np.testing.assert_array_equal(again, y)


def test_broadcast_drop_fraction_keeps_the_expected_value():
    rate, shape = 0.1, (256, 3, 512)
    y = Dropout(rate, (1,), seed=4)(tf.ones(shape), training=True).numpy()
    decisions = y[:, 0, :]  # one per (batch, unit): 131072 of them
    # Binomial standard deviation sqrt(rate (1 - rate) / n) = 8.3e-4; allow 5 of them.
    sigma = np.sqrt(rate * (1 - rate) / decisions.size)
    assert abs(float((decisions == 0).mean()) - rate) < 5 * sigma
    assert abs(float(y.mean()) - 1.0) < 5 * sigma / (1 - rate)  # E[y] = x


def test_out_of_range_broadcast_dims_are_ignored_as_in_t2t():
    x = tf.ones([4, 6, 8])
    plain = Dropout(0.3, seed=5)(x, training=True).numpy()
    ignored = Dropout(0.3, (3, -4), seed=5)(x, training=True).numpy()
    np.testing.assert_array_equal(ignored, plain)  # noise shape = the full shape: same draws


def test_broadcast_mask_is_the_same_under_xla_and_for_gathered_rows():
    ids = np.array([[5, 9, 3, 1, 0, 0], [7, 1, 0, 0, 0, 0], [4, 4, 8, 2, 6, 1]], np.int32)
    full = tf.random.stateless_normal([3, 6, 8], seed=[5, 6]) + 2.0
    eager = Dropout(0.4, (1,), seed=9)(full, training=True).numpy()
    layer = Dropout(0.4, (1,), seed=9)
    compiled = tf.function(lambda t: layer(t, training=True), jit_compile=True)(full).numpy()
    np.testing.assert_array_equal(compiled, eager)
    # the rows of a pad remover: the full [B, L, d] tensor's mask, its kept rows
    remover = PadRemover.from_padding_bias(attention_bias_ignore_padding(ids))
    rows = Dropout(0.4, (1,), seed=9)(remover.remove(full), training=True, rows=remover)
    np.testing.assert_array_equal(rows.numpy(), eager.reshape(-1, 8)[ids.reshape(-1) != 0])


@pytest.mark.parametrize("dtype", [tf.float32, tf.bfloat16])
def test_written_out_gradient_is_automatic_differentiations_bit_for_bit(dtype):
    """kept_and_scaled's value and gradient are those of ``where(keep, x * scale, 0)`` under
    automatic differentiation, on tensors of unknown batch and length as in training, with
    fewer graph ops (no broadcasting-gradient machinery)."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=[3, 5, 8]), dtype)
    dy = tf.constant(rng.normal(size=[3, 5, 8]), dtype)
    keep = tf.constant(rng.random([3, 5, 8]) > 0.3)
    scale = tf.cast(1.0 / 0.7, dtype)
    spec = [tf.TensorSpec([None, None, 8], dtype), tf.TensorSpec([None, None, 8], tf.bool)]

    def value_and_grad(fn):
        @tf.function(input_signature=[*spec, tf.TensorSpec([None, None, 8], dtype)])
        def run(x, keep, dy):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = fn(x, keep)
            return y, tape.gradient(y, x, output_gradients=dy)

        return run

    def formula(x, keep):
        return tf.where(keep, x * scale, tf.zeros([], x.dtype))

    ours = value_and_grad(lambda x, keep: kept_and_scaled(x, keep, scale))
    autodiff = value_and_grad(formula)
    assert_same_bits(ours(x, keep, dy), autodiff(x, keep, dy))

    assert traced_op_count(ours) <= traced_op_count(autodiff) - 8  # 15 against 23


def test_symbol_dropout_turns_that_share_of_ids_into_pad_in_training_only():
    """T2T's ``symbol_dropout``: ids (not embeddings) dropped to PAD, nothing rescaled, and the
    model's targets for the loss untouched (only the embedding lookups see the dropped ids)."""
    ids = tf.fill([1 << 10, 512], 7)
    layer = SymbolDropout(0.25, seed=2)
    np.testing.assert_array_equal(layer(ids, training=False).numpy(), ids.numpy())
    dropped = layer(ids, training=True).numpy()
    assert set(np.unique(dropped).tolist()) == {0, 7} and dropped.dtype == np.int32
    # 2**19 draws: the binomial standard deviation is < 6.1e-4; allow 5 of them.
    assert abs(float((dropped == 0).mean()) - 0.25) < 3.1e-3
    # The model drops its input ids and its decoder-input ids, each with its own draw, in
    # training; the loss's targets are the batch's own.
    model = build_model(
        "transformer_tiny", "hidden_size=16,filter_size=24,num_heads=2,symbol_dropout=0.25"
    )
    seen = []
    dropout = model.symbol_dropout
    model.symbol_dropout = lambda ids, training: (
        seen.append((ids, training)) or dropout(ids, training=training)
    )
    batch = {"inputs": tf.constant([[5, 6, 7, 1]]), "targets": tf.constant([[3, 4, 1]])}
    model.decoder_output(batch, training=True)
    assert [(ids.numpy().tolist(), t) for ids, t in seen] == [
        ([[5, 6, 7, 1]], True),
        ([[3, 4, 1]], True),
    ]


@pytest.mark.parametrize(
    "extra", ["", ",unidirectional_encoder=true,causal_decoder_self_attention=false"]
)
def test_a_dropped_symbol_is_padding_as_t2t_reads_padding_off_the_embeddings(extra):
    """T2T's encoder and non-causal decoder mask a dropped id (its embedding row is zero, and
    T2T reads padding off the embeddings): a training pass whose symbol dropout drops some ids
    gives the logits of the batch with those ids PAD (all other dropout off), at every
    position of a real target (the loss's targets stay the batch's own)."""
    model = build_model(
        "transformer_tiny",
        "hidden_size=16,filter_size=24,num_heads=2,layer_prepostprocess_dropout=0,"
        "attention_dropout=0,relu_dropout=0,symbol_dropout=0.5" + extra,
    )
    inputs = tf.constant([[5, 6, 7, 8, 1], [3, 4, 1, 0, 0]])
    targets = tf.constant([[9, 10, 11, 1], [12, 1, 0, 0]])
    keep = {
        id(inputs): tf.constant([[1, 1, 0, 1, 1], [1, 0, 1, 1, 1]]),
        id(targets): tf.constant([[1, 0, 1, 1], [1, 1, 1, 1]]),
    }
    model.symbol_dropout = lambda ids, training: ids * keep[id(ids)]
    trained = model({"inputs": inputs, "targets": targets}, training=True).numpy()
    model.symbol_dropout = lambda ids, training: ids
    as_pad = {"inputs": inputs * keep[id(inputs)], "targets": targets * keep[id(targets)]}
    reference = model(as_pad, training=False).numpy()
    real = targets.numpy() > 0
    # Two float32 evaluations (kept rows in training, every position here): the first-order
    # bound of the contractions both run, relative to the largest logit.
    bound = kept_rows_loss_rtol(model.hparams, 5, 4) * float(np.abs(reference).max())
    np.testing.assert_allclose(trained[real], reference[real], rtol=0, atol=bound)
