"""T2T's loss scaling of float16 activations (``activation_dtype=float16``).

T2T 1.15.7 (``utils/optimize.py``, ``ConditionalOptimizer.__init__``): when
``_mixed_precision_is_enabled`` (``activation_dtype`` float16, ``weight_dtype`` float32) the
optimizer is wrapped in ``tf.contrib.mixed_precision.LossScaleOptimizer`` with an
``ExponentialUpdateLossScaleManager(init_loss_scale=mixed_precision_optimizer_init_loss_scale,
incr_every_n_steps=2000, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)``; a
``mixed_precision_optimizer_loss_scaler`` other than ``"exponential"`` is a ``ValueError``, an
empty one trains without loss scaling (a warning). The model itself computes in float16 over
float32 variables (``utils/t2t_model.py``, ``_custom_getter`` ->
``utils/quantization.py``, ``float16_activations_var_getter``: every float32 variable is
returned cast to float16), which is Keras's ``mixed_float16`` policy here
(``training/run_setup.py``, ``setup_precision``).

TensorFlow 1.15's contrib code (``tensorflow/contrib/mixed_precision/python/``) fixes the
state machine, which differs from Keras's ``LossScaleOptimizer`` (halve at every non-finite
step, double every ``dynamic_growth_steps`` finite steps, no floor):

* ``loss_scale_optimizer.py``, ``compute_gradients``: the loss times the scale; the gradients
  times ``reciprocal(scale)``. ``apply_gradients``: the inner optimizer (and its global step)
  runs only when every gradient is finite; the manager is updated either way.
* ``loss_scale_manager.py``, ``ExponentialUpdateLossScaleManager.update_loss_scale``: a finite
  step with ``good + 1 >= incr_every_n_steps`` multiplies the scale by ``incr_ratio`` only if
  the product is finite, and resets both counters (even when the scale stays); any other
  finite step only adds one to ``good`` (``bad`` is kept: the non-finite steps need not be
  consecutive). A non-finite step with ``bad + 1 >= decr_every_n_nan_or_inf`` sets the scale
  to ``max(1, scale * decr_ratio)`` and resets both counters; any other adds one to ``bad`` and
  resets ``good``.

``T2TLossScaleOptimizer`` is Keras's ``LossScaleOptimizer`` (so the train step's
``scale_loss`` and ``dynamic_scale`` and the checkpoint's variables work as for it) with that
rule: Keras's ``step_counter`` is the manager's good steps, ``bad_steps`` is added, and the
three live in the checkpoint, so a resumed run continues them.
"""

from __future__ import annotations

import sys

import keras
import tensorflow as tf
from keras import initializers, ops
from keras.src.utils import tracking

from t2t_repro.hparam import HParams, HParamsError

# T2T's ExponentialUpdateLossScaleManager arguments (utils/optimize.py, ConditionalOptimizer)
INCR_EVERY_N_STEPS = 2000
DECR_EVERY_N_NAN_OR_INF = 2
INCR_RATIO = 2.0
DECR_RATIO = 0.5
NO_LOSS_SCALER_WARNING = (
    "warning: activation_dtype=float16 with mixed_precision_optimizer_loss_scaler='': training "
    "without loss scaling, as T2T does (its warning: it will likely cause numerical errors)"
)


def t2t_float16_activations(hp: HParams) -> bool:
    """T2T's ``_mixed_precision_is_enabled`` (``utils/optimize.py``; ``layers/
    common_attention.py``, ``mixed_precision_is_enabled``): float16 activations over float32
    weights (any other ``weight_dtype`` is refused here before this is asked)."""
    return (
        hp.get("activation_dtype", "float32") == "float16"
        and hp.get("weight_dtype", "float32") == "float32"
    )


def scales_loss(hp: HParams) -> bool:
    """Whether a float16 run scales its loss: all but T2T's float16 activations with an empty
    ``mixed_precision_optimizer_loss_scaler`` (``loss_scaled``)."""
    return not t2t_float16_activations(hp) or bool(hp.mixed_precision_optimizer_loss_scaler)


def check_loss_scaling(hp: HParams) -> None:
    """T2T's ``ValueError`` of ``ConditionalOptimizer.__init__`` (one line, before any work):
    float16 activations take only the ``exponential`` loss scaler (or none); and T2T's loss
    scale counts and skips each micro-batch of ``multistep_adam``, which this train step
    applies together as one update."""
    if not t2t_float16_activations(hp):
        return
    scaler = hp.get("mixed_precision_optimizer_loss_scaler", "exponential")
    if scaler and scaler != "exponential":
        raise HParamsError(
            f"mixed_precision_optimizer_loss_scaler={scaler!r}: mixed precision training only "
            "supports the exponential loss scaler (T2T's ValueError), or '' for none."
        )
    from t2t_repro.learning_rate import t2t_steps_per_update

    steps = t2t_steps_per_update(
        hp.get("optimizer", "adam"), hp.get("optimizer_multistep_accumulate_steps", 0)
    )
    if scaler and steps > 1:
        raise HParamsError(
            f"activation_dtype=float16 with multistep_adam over {steps} batches: T2T's loss "
            "scaler skips and counts each batch alone, which this trainer (one update of the "
            "accumulated batches) does not implement; drop one of them."
        )


def loss_scaled(optimizer, hp: HParams):
    """``optimizer`` for a float16 run: T2T's loss scaling when the hparams ask for T2T's
    float16 activations, else (``--gpu_automatic_mixed_precision``,
    ``--mixed_precision=float16``) Keras's dynamic loss scale, which is TensorFlow's
    ``enable_mixed_precision_graph_rewrite``'s (initial 2**15, doubled after 2000 finite
    steps, halved at a non-finite one)."""
    if not t2t_float16_activations(hp):
        return keras.optimizers.LossScaleOptimizer(optimizer)
    check_loss_scaling(hp)
    if not hp.mixed_precision_optimizer_loss_scaler:
        print(NO_LOSS_SCALER_WARNING, file=sys.stderr, flush=True)
        return optimizer
    return T2TLossScaleOptimizer(
        optimizer, initial_scale=float(hp.mixed_precision_optimizer_init_loss_scale)
    )


@keras.saving.register_keras_serializable(package="t2t_repro")
class T2TLossScaleOptimizer(keras.optimizers.LossScaleOptimizer):
    """Keras's ``LossScaleOptimizer`` with TensorFlow 1.15's ``ExponentialUpdateLossScaleManager``
    rule and ``LossScaleOptimizer`` unscaling (module doc), T2T's arguments by default."""

    def __init__(
        self,
        inner_optimizer,
        initial_scale=2.0**15,
        incr_every_n_steps=INCR_EVERY_N_STEPS,
        decr_every_n_nan_or_inf=DECR_EVERY_N_NAN_OR_INF,
        incr_ratio=INCR_RATIO,
        decr_ratio=DECR_RATIO,
        name=None,
    ):
        super().__init__(
            inner_optimizer,
            initial_scale=initial_scale,
            dynamic_growth_steps=incr_every_n_steps,
            name=name,
        )
        self.decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
        self.incr_ratio = incr_ratio
        self.decr_ratio = decr_ratio

    @property
    def incr_every_n_steps(self) -> int:
        return self.dynamic_growth_steps

    @tracking.no_automatic_dependency_tracking
    def build(self, var_list):
        super().build(var_list)  # step_counter (the good steps), dynamic_scale
        self.bad_steps = self.add_variable(
            shape=(),
            dtype="int",
            initializer=initializers.Zeros(),
            aggregation="none",
            name="bad_steps",
        )

    def _reset_counts(self) -> None:
        self.step_counter.assign(0)
        self.bad_steps.assign(0)

    def _stateful_handle_finite_grads(self, grads, trainable_variables):
        # loss_scale_optimizer.py, _down_scale: times the reciprocal of the scale
        inverse = tf.math.reciprocal(tf.convert_to_tensor(self.dynamic_scale))
        tvs = trainable_variables or self._trainable_variables
        unscaled = [
            g
            if g is None or self._overwrite_variable_with_gradient(v)
            else ops.multiply(g, ops.cast(inverse, g.dtype))
            for g, v in zip(grads, tvs, strict=True)
        ]
        self.inner_optimizer.apply(unscaled, trainable_variables=trainable_variables)

        def increase() -> None:  # loss_scale_manager.py, incr_loss_scale
            larger = ops.multiply(self.dynamic_scale, self.incr_ratio)
            self.dynamic_scale.assign(ops.where(ops.isfinite(larger), larger, self.dynamic_scale))
            self._reset_counts()

        def count() -> None:
            self.step_counter.assign_add(1)

        ops.cond(ops.greater_equal(self.step_counter + 1, self.incr_every_n_steps), increase, count)

    def _stateful_handle_non_finite_grads(self):
        def decrease() -> None:  # loss_scale_manager.py, decr_loss_scale
            smaller = ops.multiply(self.dynamic_scale, self.decr_ratio)
            self.dynamic_scale.assign(ops.maximum(1.0, smaller))
            self._reset_counts()

        def count() -> None:  # just_update_steps
            self.bad_steps.assign_add(1)
            self.step_counter.assign(0)

        ops.cond(
            ops.greater_equal(self.bad_steps + 1, self.decr_every_n_nan_or_inf), decrease, count
        )

    def stateless_apply(self, optimizer_variables, grads, trainable_variables):
        raise NotImplementedError(
            "T2TLossScaleOptimizer runs on TensorFlow's stateful path only (Keras's stateless "
            "one would apply Keras's loss-scale rule, not T2T's)."
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            initial_scale=self.initial_scale,
            incr_every_n_steps=config.pop("dynamic_growth_steps"),
            decr_every_n_nan_or_inf=self.decr_every_n_nan_or_inf,
            incr_ratio=self.incr_ratio,
            decr_ratio=self.decr_ratio,
        )
        return config
