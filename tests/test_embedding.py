"""The shared embedding / softmax layer's logits (t2t_repro/layers/embedding.py)."""

import numpy as np
import tensorflow as tf

from t2t_repro.layers.embedding import SymbolEmbedding


def test_logits_of_any_rank_are_hidden_times_table_transposed():
    layer = SymbolEmbedding(11, 4)
    layer.build()
    table = layer.embeddings.numpy()
    hidden = tf.random.normal([2, 3, 4], seed=4)
    expected = np.einsum("bld,vd->blv", hidden.numpy(), table)
    np.testing.assert_allclose(layer.logits(hidden).numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        layer.logits(hidden[:, 0]).numpy(), expected[:, 0], rtol=1e-5, atol=1e-6
    )
    dynamic = tf.function(layer.logits, input_signature=[tf.TensorSpec([None, None, 4])])
    np.testing.assert_allclose(dynamic(hidden).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_table_gradient_sums_over_every_position():
    layer = SymbolEmbedding(5, 3)
    layer.build()
    hidden = tf.random.normal([2, 4, 3], seed=6)
    upstream = tf.random.normal([2, 4, 5], seed=7)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer.logits(hidden) * upstream)
    grad = tape.gradient(loss, layer.embeddings)
    expected = np.einsum("blv,bld->vd", upstream.numpy(), hidden.numpy())
    np.testing.assert_allclose(tf.convert_to_tensor(grad).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_fp32_projection_gradients_match_tensorflows_matmul():
    """The float32 projection computes its table gradient in the transposed layout (faster on
    oneDNN): the hidden states' gradient is TensorFlow's to the bit, the table's to rounding."""
    layer = SymbolEmbedding(64, 16)
    layer.build()
    hidden = tf.Variable(tf.random.stateless_normal([6, 20, 16], seed=[1, 1]))
    upstream = tf.random.stateless_normal([6, 20, 64], seed=[2, 2])
    results = []
    for project in (
        layer.logits,
        lambda h: tf.matmul(h, tf.convert_to_tensor(layer.embeddings), transpose_b=True),
    ):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(project(hidden) * upstream)
        results.append(
            [
                tf.convert_to_tensor(g).numpy()
                for g in tape.gradient(loss, [hidden, layer.embeddings])
            ]
        )
    (hidden_a, table_a), (hidden_b, table_b) = results
    np.testing.assert_array_equal(hidden_a, hidden_b)
    np.testing.assert_allclose(table_a, table_b, rtol=1e-5, atol=1e-5)
    assert np.abs(table_a).max() > 1.0
