"""T2T's variable initializer (hparams ``initializer`` and ``initializer_gain``) as Keras'.

T2T makes it the default of every variable created without an initializer of its own
(``tensor2tensor/utils/t2t_model.py``, ``T2TModel.call``, with
``tensor2tensor/utils/optimize.py``, ``get_variable_initializer``): the attention and
feed-forward kernels, the relative-position tables, the learned positions (``pos=emb``), the
target-space embedding and a class label's dense layer. The symbol embeddings and the layer
norms name their own, so they keep them. The layers take the result as ``kernel_initializer``:
a name or a serialized Keras initializer, so their ``get_config`` stays JSON. With T2T's
``attention_variables_3d`` the attention's q, k, v take T2T's own normal draws and its output the
default one over T2T's 3-D shape (``AttentionComponentNormal``, ``DrawnInShape``).
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


# -- T2T's attention_variables_3d (layers/common_attention.py, compute_attention_component and
# multihead_attention with vars_3d): its q, k, v are [input_depth, heads, depth_per_head] and
# its o [heads, depth_per_head, output_depth]; ours stay the same matrices as 2-D kernels
# (T2T reshapes them so before the product), drawn as T2T draws the 3-D variables.


@keras.saving.register_keras_serializable(package="t2t_repro")
class AttentionComponentNormal(keras.initializers.RandomNormal):
    """T2T's own initializer of a 3-D q, k or v: a normal (not truncated) of deviation
    ``input_depth ** -0.5``, times ``depth_per_head ** -0.5`` for the query, whose run-time
    scaling T2T then leaves out (the scale is in the weights). ``shape`` is the 2-D kernel's
    [input_depth, heads * depth_per_head]; the deviation does not depend on its layout."""

    def __init__(self, num_heads: int, query: bool = False, seed=None) -> None:
        super().__init__(mean=0.0, stddev=1.0, seed=seed)
        self.num_heads = num_heads
        self.query = query

    def deviation(self, shape) -> float:
        input_depth, total_depth = shape
        scale = (total_depth // self.num_heads) ** -0.5 if self.query else 1.0
        return input_depth**-0.5 * scale

    def __call__(self, shape, dtype=None):
        stddev = self.deviation(shape)
        return keras.random.normal(shape, stddev=stddev, seed=self.seed, dtype=dtype)

    def get_config(self) -> dict:
        return {
            "num_heads": self.num_heads,
            "query": self.query,
            "seed": super().get_config()["seed"],
        }


@keras.saving.register_keras_serializable(package="t2t_repro")
class DrawnInShape(keras.initializers.Initializer):
    """``initializer`` (a name or serialized Keras initializer) drawn in ``shape`` and reshaped
    to the variable's: T2T's 3-D ``o`` takes the default initializer, whose fans (variance
    scaling's) are those of [heads, depth_per_head, output_depth]: h * dph in and h * output
    out, not the 2-D kernel's h * dph and output."""

    def __init__(self, initializer: str | dict, shape) -> None:
        self.initializer = initializer
        self.shape = [int(n) for n in shape]
        self._drawn = keras.initializers.get(initializer)

    def __call__(self, shape, dtype=None):
        return keras.ops.reshape(self._drawn(self.shape, dtype=dtype), shape)

    def get_config(self) -> dict:
        return {"initializer": self.initializer, "shape": self.shape}
