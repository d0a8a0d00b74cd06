"""T2T's Adafactor (``tensor2tensor/utils/adafactor.py``, ``AdafactorOptimizer``), not Keras'.

Keras' ``Adafactor`` is another algorithm (its own relative step, no ``decay_type``, no
``1e-30`` floor on the squared gradient, no momentum); this one is T2T's update rule line by
line: factored second moments over the last two dimensions of every variable of rank >= 2
(``vr``/``vc``), a full one (``v``) otherwise; the decay rate ``adam`` or ``pow``
(``adafactor_decay_rate_adam`` / ``_pow``, from the global step = the updates already
applied); the learning rate times the parameter scale ``max(rms(var), 1e-3)``; update
clipping; optional momentum (``beta1``). ``adafactor_optimizer_from_hparams`` does not pass
``epsilon1``/``epsilon2``, so T2T always uses 1e-30 and 1e-3.

Variables are float32 here (``--mixed_precision`` keeps float32 weights), so T2T's bfloat16
parameter encoding and simulated quantisation never apply.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.hparam import HParamsError

EPSILON1 = 1e-30  # AdafactorOptimizer.__init__ defaults
EPSILON2 = 1e-3
DECAY_TYPES = ("adam", "pow")


def _rms(x):
    return tf.sqrt(tf.reduce_mean(tf.square(x)))  # adafactor.py, reduce_rms


class T2TAdafactor(keras.optimizers.Optimizer):
    """``AdafactorOptimizer`` as ``adafactor_optimizer_from_hparams`` builds it."""

    def __init__(
        self,
        learning_rate,
        decay_type: str = "pow",
        beta2: float = 0.999,
        memory_exponent: float = 0.8,
        beta1: float = 0.0,
        clipping_threshold: float = 1.0,
        factored: bool = True,
        multiply_by_parameter_scale: bool = True,
        name: str = "adafactor",
        **kwargs,
    ) -> None:
        if decay_type not in DECAY_TYPES:
            # adafactor_optimizer_from_hparams: ValueError("unknown ...decay_type")
            raise HParamsError(
                f"optimizer_adafactor_decay_type={decay_type!r} is unknown to T2T; use "
                "'adam' or 'pow'."
            )
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.decay_type = decay_type
        self.beta2 = beta2
        self.memory_exponent = memory_exponent
        self.beta1 = beta1
        self.clipping_threshold = clipping_threshold
        self.factored = factored
        self.multiply_by_parameter_scale = multiply_by_parameter_scale

    def _factored(self, shape) -> bool:
        return bool(self.factored) and len(shape) >= 2

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._m, self._vr, self._vc, self._v = [], [], [], []
        for var in var_list:
            shape = tuple(var.shape)
            name = var.path.replace("/", "_")
            self._m.append(self.add_variable_from_reference(var, "m") if self.beta1 else None)
            if self._factored(shape):
                self._vr.append(self.add_variable(shape[:-1], name=f"{name}_vr"))
                self._vc.append(self.add_variable(shape[:-2] + shape[-1:], name=f"{name}_vc"))
                self._v.append(None)
            else:
                self._vr.append(None)
                self._vc.append(None)
                self._v.append(self.add_variable(shape, name=f"{name}_v"))

    def _decay_rate(self, step):
        if self.decay_type == "adam":  # adafactor_decay_rate_adam
            t = step + 1.0
            beta2 = tf.constant(self.beta2, tf.float32)
            return beta2 * (1.0 - tf.pow(beta2, t - 1.0)) / (1.0 - tf.pow(beta2, t))
        return 1.0 - tf.pow(step + 1.0, -self.memory_exponent)  # adafactor_decay_rate_pow

    def update_step(self, gradient, variable, learning_rate):
        """``AdafactorOptimizer._resource_apply_dense``, in its order of operations."""
        index = self._get_variable_index(variable)
        grad = tf.cast(gradient, tf.float32)
        grad_squared = tf.square(grad) + EPSILON1
        grad_squared_mean = tf.reduce_mean(grad_squared)
        decay_rate = self._decay_rate(tf.cast(self.iterations, tf.float32))
        update_scale = tf.cast(learning_rate, tf.float32)
        old_val = tf.convert_to_tensor(variable)
        if self.multiply_by_parameter_scale:
            update_scale *= tf.maximum(_rms(old_val), EPSILON2)
        # T2T's "HACK" (keeps XLA from fusing across variables); kept for T2T's rounding.
        decay_rate += grad_squared_mean * 1e-30
        update_scale += grad_squared_mean * 1e-30
        mixing_rate = 1.0 - decay_rate
        if self._factored(tuple(variable.shape)):
            vr, vc = self._vr[index], self._vc[index]
            new_vr = decay_rate * vr + mixing_rate * tf.reduce_mean(grad_squared, -1)
            new_vc = decay_rate * vc + mixing_rate * tf.reduce_mean(grad_squared, -2)
            self.assign(vr, new_vr)
            self.assign(vc, new_vc)
            long_term_mean = tf.reduce_mean(new_vr, -1, keepdims=True)
            r_factor = tf.math.rsqrt(new_vr / long_term_mean)
            c_factor = tf.math.rsqrt(new_vc)
            x = grad * tf.expand_dims(r_factor, -1) * tf.expand_dims(c_factor, -2)
        else:
            v = self._v[index]
            new_v = decay_rate * v + mixing_rate * grad_squared
            self.assign(v, new_v)
            x = grad * tf.math.rsqrt(new_v)
        x /= tf.maximum(1.0, _rms(x) / self.clipping_threshold)
        subtrahend = update_scale * x
        if self.beta1:
            m = self._m[index]
            subtrahend = self.beta1 * m + (1.0 - self.beta1) * subtrahend
            self.assign(m, subtrahend)
        self.assign(variable, old_val - subtrahend)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            decay_type=self.decay_type,
            beta2=self.beta2,
            memory_exponent=self.memory_exponent,
            beta1=self.beta1,
            clipping_threshold=self.clipping_threshold,
            factored=self.factored,
            multiply_by_parameter_scale=self.multiply_by_parameter_scale,
        )
        return config
