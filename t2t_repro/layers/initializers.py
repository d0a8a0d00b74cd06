"""T2T's variable initializer (hparams ``initializer`` and ``initializer_gain``) as Keras'.

T2T makes it the default of every variable created without an initializer of its own
(``tensor2tensor/utils/t2t_model.py``, ``T2TModel.call``, with
``tensor2tensor/utils/optimize.py``, ``get_variable_initializer``): the attention and
feed-forward kernels, the relative-position tables, the learned positions (``pos=emb``), the
target-space embedding and a class label's dense layer. The symbol embeddings and the layer
norms name their own, so they keep them. The layers take the result as ``kernel_initializer``:
a name or a serialized Keras initializer, so their ``get_config`` stays JSON.
"""

from __future__ import annotations

import keras

# T2T's uniform_unit_scaling with gain 1.0 (its sets' value), its xavier, and TensorFlow's
# default when T2T's initializer is empty (get_variable's glorot_uniform) are all this one.
GLOROT_UNIFORM = "glorot_uniform"
T2T_NAMES = ("orthogonal", "uniform", "normal_unit_scaling", "uniform_unit_scaling", "xavier")
# Initializers that divide by a variance: T2T's (TensorFlow 1's VarianceScaling) refuses a
# gain that is not positive, as Keras' does.
NEEDS_POSITIVE_GAIN = ("normal_unit_scaling", "uniform_unit_scaling")


def t2t_initializer(name: str | None, gain: float = 1.0) -> str | dict:
    """The Keras initializer of T2T's ``initializer`` ``name`` and ``initializer_gain``:
    ``glorot_uniform`` where T2T's is the same distribution, else a serialized initializer
    (each layer deserializes its own instance, so no two draw the same values). ValueError
    for a name T2T does not have."""
    if name not in (None, "", *T2T_NAMES):
        raise ValueError(f"initializer={name!r} is not one of T2T's: {', '.join(T2T_NAMES)}.")
    if name in NEEDS_POSITIVE_GAIN and not gain > 0:
        raise ValueError(f"initializer={name} needs initializer_gain > 0 (it is {gain}).")
    if not name or name == "xavier" or (name == "uniform_unit_scaling" and gain == 1.0):
        return GLOROT_UNIFORM
    if name == "orthogonal":
        initializer = keras.initializers.Orthogonal(gain=gain)
    elif name == "uniform":
        limit = 0.1 * gain
        initializer = keras.initializers.RandomUniform(-limit, limit)
    else:
        # TensorFlow 1's distribution="normal" is a normal truncated at two deviations, its
        # deviation corrected for the cut, as Keras' "truncated_normal".
        distribution = "uniform" if name == "uniform_unit_scaling" else "truncated_normal"
        initializer = keras.initializers.VarianceScaling(gain, "fan_avg", distribution)
    return keras.initializers.serialize(initializer)
