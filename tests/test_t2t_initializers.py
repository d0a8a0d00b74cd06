"""T2T's ``initializer`` and ``initializer_gain`` mean what they mean in T2T: the initializer
``utils/optimize.py``'s ``get_variable_initializer`` builds, TensorFlow 1's own (here
``tf.compat.v1``'s, the reference), is the default of every variable that names none; the
symbol embeddings and layer norms keep their own. Draws are compared by what defines each
distribution (bounds, spread, orthogonality), with tolerances derived from the sample size."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.initializers import GLOROT_UNIFORM, t2t_initializer
from tests.model_utils import build_model

SHAPE = (256, 384)  # 98,304 draws: a spread's relative standard error ~0.2%
V1 = tf.compat.v1


def t2t_reference(name: str, gain: float):
    """What T2T 1.15.7's get_variable_initializer returns for ``name`` and ``gain``."""
    return {
        "orthogonal": lambda: V1.orthogonal_initializer(gain=gain),
        "uniform": lambda: V1.random_uniform_initializer(-0.1 * gain, 0.1 * gain),
        "normal_unit_scaling": lambda: V1.variance_scaling_initializer(
            gain, mode="fan_avg", distribution="normal"
        ),
        "uniform_unit_scaling": lambda: V1.variance_scaling_initializer(
            gain, mode="fan_avg", distribution="uniform"
        ),
        "xavier": lambda: V1.glorot_uniform_initializer(),
    }[name]()


def ours(name: str, gain: float) -> np.ndarray:
    return keras.initializers.get(t2t_initializer(name, gain))(SHAPE).numpy()


@pytest.mark.parametrize(
    "name, gain",
    [
        ("uniform_unit_scaling", 2.0),
        ("normal_unit_scaling", 1.0),
        ("normal_unit_scaling", 3.0),
        ("uniform", 1.5),
        ("orthogonal", 1.5),
        ("xavier", 7.0),  # T2T's xavier ignores the gain
    ],
)
def test_each_initializer_draws_t2ts_distribution(name, gain):
    got = ours(name, gain)
    want = t2t_reference(name, gain)(SHAPE, tf.float32).numpy()
    # The spread (2% covers a 0.2% standard error tenfold), and the centre.
    assert got.std() == pytest.approx(want.std(), rel=0.02)
    assert abs(got.mean()) < 0.02 * want.std()
    if name == "orthogonal":  # 256 orthogonal rows, each of norm gain
        np.testing.assert_allclose(got @ got.T, gain**2 * np.eye(SHAPE[0]), atol=1e-4)
    else:  # the bounds: uniform draws reach theirs, truncated normals stop at 2 deviations
        assert abs(got).max() == pytest.approx(abs(want).max(), rel=0.02)


def test_t2ts_transformer_value_is_the_unchanged_default():
    """T2T's transformer sets (uniform_unit_scaling, gain 1), its xavier and an empty
    initializer (TensorFlow's get_variable default) are Glorot uniform, as before."""
    for name, gain in (("uniform_unit_scaling", 1.0), ("xavier", 3.0), ("", 1.0), (None, 1.0)):
        assert t2t_initializer(name, gain) == GLOROT_UNIFORM
    with pytest.raises(ValueError, match="initializer='he_normal' is not one of T2T's"):
        t2t_initializer("he_normal")
    with pytest.raises(ValueError, match="needs initializer_gain > 0"):
        t2t_initializer("normal_unit_scaling", 0.0)


def test_the_model_takes_it_where_t2t_does():
    """Orthogonal with gain 1.5 (T2T's basic_params1): every kernel and T2T table that names
    no initializer of its own is orthogonal at that gain; the symbol embeddings keep
    T2T's normal of deviation hidden_size**-0.5, the layer norms their ones."""
    model = build_model(
        "transformer_tiny",
        "hidden_size=32,filter_size=48,num_heads=2,num_hidden_layers=1,pos=emb,max_length=8,"
        "self_attention_type=dot_product_relative,max_relative_position=2,"
        "initializer=orthogonal,initializer_gain=1.5",
        vocab_size=300,
    )
    checked = set()
    for w in model.weights:
        value = w.numpy()
        if w.path.endswith(("/kernel", "position_embedding", "target_space_embedding")) or (
            "relative_positions" in w.path
        ):
            rows = value if value.shape[0] <= value.shape[1] else value.T
            np.testing.assert_allclose(rows @ rows.T, 2.25 * np.eye(len(rows)), atol=1e-4)
            checked.add(w.path.split("/")[-1])
        elif "emb" in w.path.split("/")[-2] or w.path.endswith("/weights"):
            assert value.std() == pytest.approx(32**-0.5, rel=0.1)  # 9,600 draws
            checked.add("symbol")
        elif w.path.endswith("gamma"):
            assert (value == 1).all()
    assert {
        "kernel",
        "position_embedding",
        "target_space_embedding",
        "relative_positions_keys",
        "relative_positions_values",
        "symbol",
    } <= checked, checked
