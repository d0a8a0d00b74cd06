"""The shared embedding / softmax layer's logits (t2t_repro/layers/embedding.py)."""

import numpy as np
import tensorflow as tf

from t2t_repro.layers.embedding import SymbolEmbedding
from tests.float_bounds import matmul_difference_bound


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
    oneDNN): both gradients are TensorFlow's to float32 rounding. The hidden states' gradient
    is ``upstream @ table`` on both paths, but a 2-D MatMul here and TensorFlow's BatchMatMul
    gradient there: other kernels, whose sums may round differently (they did on AMD EPYC
    without AVX-512: 157 of 1,920 elements an ulp or two apart), so within the bound of two
    evaluations of a 64-term dot product (``tests/float_bounds.py``)."""
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
    bound = matmul_difference_bound(upstream.numpy(), layer.embeddings.numpy())
    assert np.all(np.abs(hidden_a.astype(np.float64) - hidden_b) <= bound)
    assert bound.max() < 1e-4 * np.abs(hidden_a).max()
    np.testing.assert_allclose(table_a, table_b, rtol=1e-5, atol=1e-5)
    assert np.abs(table_a).max() > 1.0
