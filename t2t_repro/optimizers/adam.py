"""T2T's Adam family: ``adam``, ``true_adam``, ``multistep_adam``, ``adam_w``.

Keras' ``Adam`` is TF1's ``AdamOptimizer`` (the epsilon-hat form: ``var -= lr_t * m /
(sqrt(v) + eps)`` with ``lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)``), so:

* ``true_adam`` (``tf.train.AdamOptimizer``) is it;
* ``adam`` is T2T's ``tf.contrib.opt.LazyAdamOptimizer``, whose dense update is Adam's. It
  differs only on a sparse gradient (``IndexedSlices``), which T2T never gives it: its
  ``ConditionalOptimizer.compute_gradients`` (``utils/optimize.py``) passes every gradient
  through ``common_layers.cast_like``, whose ``tf.convert_to_tensor`` makes a gathered
  table's ``IndexedSlices`` dense (a relative-position table's too; the embeddings' are dense
  already: ``common_layers.convert_gradient_to_tensor``), so it is Adam there as here;
* ``multistep_adam`` (``utils/multistep_optimizer.py``, ``MultistepAdamOptimizer``) applies
  Adam to the mean of ``n`` micro-batch gradients every ``n`` steps: here the train step
  accumulates ``optimizer_multistep_accumulate_steps`` micro-batches and the optimizer steps
  once per update, while the trainer's step counts batches as T2T's global step does
  (``training/loop/step_count.py``); no other optimizer accumulates, as in T2T. As in T2T,
  each micro-step's gradient is the mean over its own tokens, with T2T's weight decay and
  noise, clipped by ``clip_grad_norm`` on its own
  (``optimize_loss`` runs once per micro-step), and the update takes their mean
  (``t2t_multistep``: the train step does this, ``regularization.micro_step_gradients``);
* ``adam_w`` is ``tf.contrib.opt.AdamWOptimizer(weight_decay=hparams.weight_decay)``: before
  each Adam update ``var -= weight_decay * var`` (``DecoupledWeightDecayExtension``; the decay
  is not scaled by the learning rate), on every variable.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import keras
from keras import ops

from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.optimizers.fused_adam import fusable, fused_update_step


class _StepConstants(NamedTuple):
    """What every weight's Adam update of one step reads: built once per dtype and device."""

    alpha: Any  # the bias-corrected rate lr_t
    one_minus_beta_1: Any
    one_minus_beta_2: Any
    epsilon: Any


class T2TAdam(keras.optimizers.Adam):
    """Keras' Adam; in a mixed_bfloat16 run each weight's update is one XLA kernel
    (``fused_adam.py``) given the step's rate. float32 runs are Keras' Adam to the bit.

    Keras computes the step's bias-corrected rate ``lr_t`` again for every weight (two
    powers, a square root, casts: ~17 graph ops a weight, a third of a small model's
    training graph, all traced and run for one scalar). Here it is computed once an update
    per dtype and device, by the same operations, so it has the same bits; so are the
    constants ``1 - beta_1``, ``1 - beta_2`` and ``epsilon``, which Keras converts from
    Python floats at every weight (three graph constants a weight; the same float32 values)."""

    # (dtype, device) -> _StepConstants, while an update is built
    _update_constants: dict | None = None

    def _distributed_tf_update_step(self, distribution, grads_and_vars, learning_rate):
        self._update_constants = {}
        try:
            return super()._distributed_tf_update_step(distribution, grads_and_vars, learning_rate)
        finally:
            self._update_constants = None

    def update_step(self, gradient, variable, learning_rate):
        if self.amsgrad:
            super().update_step(gradient, variable, learning_rate)
            return
        constants = self._step_constants(learning_rate, variable)
        if fusable(self, gradient, variable):
            fused_update_step(self, gradient, variable, constants.alpha)
        else:
            self._update(gradient, variable, constants)

    def _step_constants(self, learning_rate, variable) -> _StepConstants:
        """``keras.optimizers.Adam.update_step``'s ``alpha`` for ``variable``, by its own
        operations, and its Python-float constants as tensors of the variable's dtype (what
        Keras' ``ops`` convert them to); built once an update per dtype and device (a mirrored
        run's GPUs get no copies of one device's)."""
        key = (variable.dtype, getattr(variable, "device", ""))
        if self._update_constants is not None and key in self._update_constants:
            return self._update_constants[key]
        dtype = variable.dtype
        lr = ops.cast(learning_rate, dtype)
        local_step = ops.cast(self.iterations + 1, dtype)
        beta_1_power = ops.power(ops.cast(self.beta_1, dtype), local_step)
        beta_2_power = ops.power(ops.cast(self.beta_2, dtype), local_step)
        constants = _StepConstants(
            alpha=lr * ops.sqrt(1 - beta_2_power) / (1 - beta_1_power),
            one_minus_beta_1=ops.convert_to_tensor(1 - self.beta_1, dtype),
            one_minus_beta_2=ops.convert_to_tensor(1 - self.beta_2, dtype),
            epsilon=ops.convert_to_tensor(self.epsilon, dtype),
        )
        if self._update_constants is not None:
            self._update_constants[key] = constants
        return constants

    def _update(self, gradient, variable, constants: _StepConstants) -> None:
        """``keras.optimizers.Adam.update_step`` (no amsgrad) given the step's constants:
        TF1's ``AdamOptimizer`` arithmetic, operation for operation."""
        gradient = ops.cast(gradient, variable.dtype)
        m = self._momentums[self._get_variable_index(variable)]
        v = self._velocities[self._get_variable_index(variable)]
        self.assign_add(m, ops.multiply(ops.subtract(gradient, m), constants.one_minus_beta_1))
        self.assign_add(
            v, ops.multiply(ops.subtract(ops.square(gradient), v), constants.one_minus_beta_2)
        )
        self.assign_sub(
            variable,
            ops.divide(ops.multiply(m, constants.alpha), ops.add(ops.sqrt(v), constants.epsilon)),
        )


class T2TAdamW(T2TAdam):
    """Adam after ``var -= weight_decay * var`` (contrib's ``AdamWOptimizer``)."""

    def __init__(self, *args, decoupled_weight_decay: float = 0.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.decoupled_weight_decay = decoupled_weight_decay

    def update_step(self, gradient, variable, learning_rate):
        if self.decoupled_weight_decay:
            self.assign_sub(variable, self.decoupled_weight_decay * variable)
        super().update_step(gradient, variable, learning_rate)

    def get_config(self) -> dict:
        return {**super().get_config(), "decoupled_weight_decay": self.decoupled_weight_decay}


def check_adam(key: str, hp: HParams) -> None:
    """HParamsError (one line) for values T2T's Adam family cannot run with."""
    if key == "multistep_adam" and hp.optimizer_multistep_accumulate_steps < 1:
        # T2T's MultistepAdamOptimizer with n=0 never applies an update (tf.mod by 0).
        raise HParamsError(
            "optimizer=multistep_adam needs optimizer_multistep_accumulate_steps >= 1 "
            f"(got {hp.optimizer_multistep_accumulate_steps})."
        )


def make_adam(key: str, hp: HParams, learning_rate, **kwargs) -> keras.optimizers.Optimizer:
    """The optimizer of registry key ``key`` (one of the family) from T2T's hparams."""
    check_adam(key, hp)
    args = dict(
        learning_rate=learning_rate,
        beta_1=hp.optimizer_adam_beta1,
        beta_2=hp.optimizer_adam_beta2,
        epsilon=hp.optimizer_adam_epsilon,
        **kwargs,
    )
    if key == "adam_w":
        return T2TAdamW(decoupled_weight_decay=hp.weight_decay, **args)
    if key == "multistep_adam":  # the train step clips each micro-step (micro_step_gradients)
        args["global_clipnorm"] = None
    optimizer = T2TAdam(**args)
    optimizer.t2t_multistep = key == "multistep_adam"
    return optimizer
