"""Adam's update of a float32 weight as one XLA kernel, for mixed_bfloat16 runs only.

Why: with bf16 matmuls the step's non-matmul work sets its speed, and Keras' Adam
(``keras.optimizers.Adam.update_step``, TF1's ``AdamOptimizer`` arithmetic) updates each
weight in about a dozen TensorFlow kernels, each a pass over the weight, its two slots or
the gradient (the transformer_base has 61M float32 weights). Compiled by XLA the same
arithmetic is one pass that reads the weight, the slots and the gradient once and writes
the three back. XLA may contract a multiply and an add into one rounding, so the update is
equal to Keras' to float32 rounding, not to the bit: float32 runs (T2T-exact) never take
this path, only runs whose compute dtype is bfloat16 (T2T's ``activation_dtype=bfloat16``,
whose weights and optimizer stay in float32: ``tensor2tensor/utils/optimize.py``).
"""

from __future__ import annotations

import keras
import tensorflow as tf


@tf.function(jit_compile=True)
def _adam_update(variable, m, v, gradient, alpha, beta_1, beta_2, epsilon):
    """Keras' ``Adam.update_step`` arithmetic (no amsgrad) on one weight, in place, given the
    step's bias-corrected rate ``alpha`` (``T2TAdam._step_constants``: Keras' own operations,
    built once an update)."""
    gradient = tf.cast(gradient, variable.dtype)
    m_new = m + (gradient - m) * (1 - beta_1)
    v_new = v + (tf.square(gradient) - v) * (1 - beta_2)
    m.assign(m_new)
    v.assign(v_new)
    variable.assign_sub(m_new * alpha / (tf.sqrt(v_new) + epsilon))


def fusable(optimizer: keras.optimizers.Adam, gradient, variable) -> bool:
    """Whether this update takes the XLA kernel: a bf16 run's dense float32 update of plain
    (not mirrored) variables; anything else keeps Keras' own update."""
    if keras.mixed_precision.global_policy().compute_dtype != "bfloat16":
        return False
    if optimizer.amsgrad or variable.dtype != tf.float32 or not isinstance(gradient, tf.Tensor):
        return False
    index = optimizer._get_variable_index(variable)
    slots = (optimizer._momentums[index].value, optimizer._velocities[index].value)
    return not any(isinstance(x, tf.distribute.DistributedValues) for x in (variable, *slots))


def fused_update_step(optimizer: keras.optimizers.Adam, gradient, variable, alpha) -> None:
    """``keras.optimizers.Adam.update_step`` with the weight's update in one XLA kernel;
    ``alpha``: the step's rate, a float32 scalar."""
    dtype = variable.dtype
    index = optimizer._get_variable_index(variable)
    with tf.name_scope("adam_update"):  # Names the kernel in a profile.
        _adam_update(
            variable,
            optimizer._momentums[index].value,
            optimizer._velocities[index].value,
            gradient,
            alpha,
            tf.constant(optimizer.beta_1, dtype),
            tf.constant(optimizer.beta_2, dtype),
            tf.constant(optimizer.epsilon, dtype),
        )
