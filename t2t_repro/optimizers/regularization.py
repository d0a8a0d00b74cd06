"""What T2T does to the gradients before its optimizer sees them, beside clipping.

* ``weight_decay`` (``tensor2tensor/utils/optimize.py``, ``weight_decay_and_noise`` and
  ``weight_decay``): ``weight_decay * sum(l2_loss(v))`` is added to the loss for every
  trainable variable but the biases (T2T's heuristic: rank 1 and a name ending in
  ``bias:0``), so its gradient ``weight_decay * v`` is added to theirs. It applies to every
  optimizer (``adam_w`` decays the weights a second time, in its update). Here T2T's biases
  are the Dense layers' ``bias`` and the layer norms' ``beta`` (T2T's ``layer_norm_bias``);
  the layer norms' ``gamma`` (``layer_norm_scale``) is decayed, as in T2T.
* ``grad_noise_scale`` (``optimize_loss(gradient_noise_scale=...)``, tf.contrib.layers /
  tf_slim ``_add_scaled_noise_to_gradients``): ``truncated_normal(shape) * scale`` added to
  every gradient, after the decay and before the clipping by global norm. T2T draws it from
  the op's own random state; here it is drawn from (update, variable index), so every
  replica adds the same noise and a resumed run the same as an uninterrupted one.

* ``weight_noise`` (``weight_decay_and_noise``, ``weight_noise``): before each step T2T adds
  ``truncated_normal(shape) * weight_noise * learning_rate * 0.001`` to every variable under
  ``/body/`` (all but the symbol-modality embeddings, which their layer marks
  ``t2t_row_sharded`` here, and a classifier's ``class_label_top`` dense, marked
  ``t2t_outside_body``), for good. T2T's graph does not order the noise before the
  forward pass's reads; here it is added before the update's forward pass, drawn from
  (update, variable index) so every replica and worker adds the same.

Clipping (``clip_grad_norm``: ``tf.clip_by_global_norm``) is the optimizer's
``global_clipnorm`` (``keras.ops`` computes the same scale).
"""

from __future__ import annotations

import tensorflow as tf

BIAS_NAMES = ("bias", "beta")
NOISE_SEED = 1 << 20  # weight-noise seeds (step, this + index), apart from the gradients'.


def is_t2t_bias(variable) -> bool:
    """T2T's ``weight_decay`` skips rank-1 variables named ``...bias``."""
    name = variable.name.split(":")[0].rsplit("/", 1)[-1]
    return len(variable.shape) == 1 and name in BIAS_NAMES


def regularized_gradients(grads, variables, hparams, step, scale=1.0):
    """``grads`` (of the mean loss, times ``scale``: a loss scale) with T2T's weight decay
    and gradient noise added; the list itself when both are off."""
    decay = float(hparams.get("weight_decay", 0.0) or 0.0)
    noise = float(hparams.get("grad_noise_scale", 0.0) or 0.0)
    if not decay and not noise:
        return grads
    out = []
    for index, (grad, variable) in enumerate(zip(grads, variables, strict=True)):
        if decay and not is_t2t_bias(variable):
            grad = grad + decay * scale * tf.cast(variable, grad.dtype)
        if noise:
            seed = tf.stack([tf.cast(step, tf.int64), tf.constant(index, tf.int64)])
            draw = tf.random.stateless_truncated_normal(tf.shape(grad), seed, dtype=grad.dtype)
            grad = grad + draw * (noise * scale)
        out.append(grad)
    return out


def micro_step_gradients(grads, variables, hparams, step, scale=1.0):
    """One step of T2T's ``multistep_adam`` as ``optimize_loss`` prepares it before
    ``MultistepAdamOptimizer`` accumulates it: decay and noise, then clipping by global norm
    (``clip_grad_norm``; the optimizer then does not clip the mean again)."""
    grads = regularized_gradients(grads, variables, hparams, step, scale)
    clip = float(hparams.get("clip_grad_norm", 0.0) or 0.0)
    if clip:
        grads, _ = tf.clip_by_global_norm(grads, clip * scale)
    return grads


def add_weight_noise(variables, rate: float, learning_rate, step) -> None:
    """T2T's ``weight_noise`` on ``variables`` (in a cross-replica context)."""
    scale = rate * tf.cast(learning_rate, tf.float32) * 0.001
    for index, variable in enumerate(variables):
        if getattr(variable, "t2t_row_sharded", False) or getattr(
            variable, "t2t_outside_body", False
        ):
            continue  # T2T's symbol and class-label modalities are not under /body/
        seed = tf.stack([tf.cast(step, tf.int64), tf.constant(index + NOISE_SEED, tf.int64)])
        draw = tf.random.stateless_truncated_normal(variable.shape, seed, dtype=variable.dtype)
        variable.assign_add(draw * tf.cast(scale, variable.dtype))
