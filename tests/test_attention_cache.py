"""The attention layer's cache path gives what the full pass gives, one position at a time;
its training products' written-out gradients are automatic differentiation's."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.attention import (
    MultiHeadAttention,
    attention_bias_lower_triangle,
    combine_heads,
    heads_matmul,
    position_indices,
    split_heads,
    write_position,
)
from tests.float_bounds import assert_same_bits
from tests.grappler import grappler
from tests.model_utils import build_model, traced_op_count

X = tf.random.stateless_normal([2, 5, 8], seed=[1, 2])
MEMORY = tf.random.stateless_normal([2, 4, 8], seed=[3, 4])


def _attention():
    layer = MultiHeadAttention(2, 8, 6, 8)
    layer.build((None, None, 8), (None, None, 8))
    return layer


def test_self_attention_step_by_step_matches_the_causal_pass():
    layer = _attention()
    full = layer(X, bias=attention_bias_lower_triangle(5)).numpy()
    cache = layer.empty_cache(2, 5, tf.float32)
    for i in range(5):
        out, cache = layer(X[:, i : i + 1], cache=cache, cache_update_index=i)
        np.testing.assert_allclose(out.numpy()[:, 0], full[:, i], atol=1e-6, rtol=1e-6)
    keys, values = layer.compute_key_value(X)
    np.testing.assert_allclose(cache[0].numpy(), keys.numpy(), atol=1e-6)
    np.testing.assert_allclose(cache[1].numpy(), values.numpy(), atol=1e-6)


def test_precomputed_memory_cache_matches_attending_to_the_memory():
    layer = _attention()
    bias = tf.constant([[[[0.0, 0.0, -1e9, -1e9]]], [[[0.0, 0.0, 0.0, 0.0]]]])
    cache = layer.compute_key_value(MEMORY)
    out, same = layer(X, bias=bias, cache=cache)
    np.testing.assert_allclose(out.numpy(), layer(X, MEMORY, bias=bias).numpy(), atol=1e-6)
    assert same[0] is cache[0] and same[1] is cache[1]
    with pytest.raises(ValueError, match="return_weights"):
        layer(X, cache=cache, return_weights=True)


def test_decode_steps_never_project_the_encoder_output_again():
    """Encoder-decoder keys/values are computed once per sentence, in ``init_cache``."""
    model = build_model("transformer_tiny", "hidden_size=16,filter_size=24,num_heads=2")
    calls = []
    for layer in model.decoder.layers_:
        attention = layer.encdec_attention.sublayer
        original = attention.compute_key_value
        attention.compute_key_value = lambda m, f=original: calls.append(1) or f(m)
    inputs = tf.constant([[5, 6, 1], [7, 1, 0]])
    cache = model.init_cache(inputs, 4)
    assert len(calls) == model.hparams.num_hidden_layers
    ids = tf.constant([[0, 3, 4, 5, 6], [0, 8, 9, 1, 0]])
    for i in range(4):
        _, cache = model.decode_step(ids, tf.constant(i), cache)
    assert len(calls) == model.hparams.num_hidden_layers


@pytest.mark.parametrize("shape", [[None, None, 8], [None, 5, 8], [3, None, 8], [3, 1, 8]])
def test_heads_split_and_combine_keep_what_is_known_of_the_shape(shape):
    """Traced with unknown dims (training's buckets) the static dims survive both ways (the
    decode step's [B, 1, d] and XLA's static shapes read them); the values are a reshape."""

    @tf.function(autograph=False)
    def split_and_combine(x):
        heads = split_heads(x, 2)
        assert heads.shape.as_list() == [shape[0], 2, shape[1], 4], heads.shape
        back = combine_heads(heads)
        assert back.shape.as_list() == shape, back.shape
        return heads, back

    x = tf.random.stateless_normal([3, 5 if shape[1] is None else shape[1], 8], seed=[5, 6])
    heads, back = split_and_combine.get_concrete_function(tf.TensorSpec(shape))(x)
    expected = np.transpose(x.numpy().reshape(3, -1, 2, 4), [0, 2, 1, 3])
    np.testing.assert_array_equal(heads.numpy(), expected)
    np.testing.assert_array_equal(back.numpy(), x.numpy())


@pytest.mark.parametrize("shape", [[None, 2, None, 4], [None, None, None, 4], [3, 2, 7, 4]])
def test_a_written_position_replaces_that_position_of_every_row_only(shape):
    """What the cached decode steps write: traced with what is known of the buffer's shape
    (the searches' buffers; XLA's are static), run at the first, a middle and the last one."""
    buffer = tf.random.stateless_normal([3, 2, 7, 4], seed=[7, 8])
    values = tf.random.stateless_normal([3, 2, 1, 4], seed=[9, 10])

    @tf.function(autograph=False)
    def write(buffer, values, index):
        written = write_position(buffer, values, position_indices(buffer, index))
        assert written.shape.as_list() == shape, written.shape
        return written

    values_spec = tf.TensorSpec(shape[:2] + [1, 4])
    traced = write.get_concrete_function(
        tf.TensorSpec(shape), values_spec, tf.TensorSpec([], tf.int32)
    )
    for index in (0, 3, 6):
        expected = buffer.numpy().copy()
        expected[:, :, index] = values.numpy()[:, :, 0]
        np.testing.assert_array_equal(traced(buffer, values, tf.constant(index)), expected)


@pytest.mark.parametrize("grappler_on", [True, False])
@pytest.mark.parametrize("transpose_b", [True, False])
def test_heads_matmul_gradient_is_automatic_differentiations_bit_for_bit(transpose_b, grappler_on):
    """The training graph's attention products: value and gradients of ``tf.matmul`` to the
    bit, on [B, H, ., .] tensors of unknown batch and length, in fewer graph ops."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(3, 2, 5, 8)), tf.float32)
    y = tf.constant(rng.normal(size=(3, 2, 5 if transpose_b else 8, 8)), tf.float32)
    dz = tf.constant(rng.normal(size=(3, 2, 5, 5 if transpose_b else 8)), tf.float32)
    spec = tf.TensorSpec([None, 2, None, 8], tf.float32)
    out_spec = tf.TensorSpec([None, 2, None, None], tf.float32)

    def step(matmul):
        @tf.function(input_signature=[spec, spec, out_spec])
        def run(x, y, dz):
            with tf.GradientTape() as tape:
                tape.watch([x, y])
                z = matmul(x, y, transpose_b=transpose_b)
            return [z, *tape.gradient(z, [x, y], output_gradients=dz)]

        return run

    with grappler(on=grappler_on):
        ours, theirs = step(heads_matmul), step(tf.matmul)
        got, want = ours(x, y, dz), theirs(x, y, dz)
    assert_same_bits(got, want)

    assert traced_op_count(ours) <= traced_op_count(theirs) - 10
