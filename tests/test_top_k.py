"""The two-stage top-k gives tf.math.top_k's values and indices exactly, ties included."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.top_k import top_k


@pytest.mark.parametrize(
    "n,k",
    [(32768, 8), (32800, 8), (4096, 8), (2205, 42), (40000, 2)],  # padded, too short, ...
)
@pytest.mark.parametrize("use_xla", [False, True])
def test_equals_tf_top_k_with_ties(n, k, use_xla):
    rng = np.random.default_rng(n + k)
    x = np.round(rng.normal(size=[12, n]) * 2).astype(np.float32) / 2  # many equal values
    x[0] = -1e7  # a row of one value: the k lowest indices
    x[1, :] = rng.normal(size=n).astype(np.float32)  # no ties
    x[2, -5:] = 50.0  # the top in the last (padded) block
    x[3, ::97] = 9.0  # equal maxima in many blocks
    expected = tf.math.top_k(x, k=k)
    got = tf.function(lambda t: top_k(t, k), jit_compile=use_xla, autograph=False)(tf.constant(x))
    np.testing.assert_array_equal(got[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(got[1].numpy(), expected[1].numpy())


def test_small_rows_use_tf_top_k_shape_rules():
    values, indices = top_k(tf.constant([[1.0, 3.0, 2.0]]), 2)
    assert values.numpy().tolist() == [[3.0, 2.0]] and indices.numpy().tolist() == [[1, 2]]
