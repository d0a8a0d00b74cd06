"""TF1's ``tf.train`` optimizers that T2T registers, with TF1's update rules and slots.

Keras' namesakes differ: its SGD momentum folds the learning rate into the velocity (TF1's
``accum`` does not, so a changing learning rate moves the weights differently), its Adagrad
adds an epsilon, its RMSprop starts the mean square at 0 (TF1: 1) and puts epsilon elsewhere.
The rules below are those of TF1's kernels (``tensorflow/core/kernels/training_ops.cc``:
``ApplyMomentum``, ``ApplyAdagrad``, ``ApplyRMSProp``, ``ApplyFtrl``) with the defaults the
T2T registrations use (``tensor2tensor/utils/optimize.py``: ``momentum`` from the hparams;
``adagrad``, ``rms_prop``, ``ftrl`` as ``tf.train.XOptimizer(learning_rate)``).
"""

from __future__ import annotations

import keras
import tensorflow as tf


class _TF1Optimizer(keras.optimizers.Optimizer):
    """Slots named ``SLOTS`` (name -> initial value), one of each per variable."""

    SLOTS: dict[str, float] = {}

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._slots = {
            slot: self.add_optimizer_variables(var_list, slot, keras.initializers.Constant(initial))
            for slot, initial in self.SLOTS.items()
        }

    def _slot(self, name: str, variable):
        return self._slots[name][self._get_variable_index(variable)]


class TF1Momentum(_TF1Optimizer):
    """``tf.train.MomentumOptimizer``: accum = momentum * accum + g; var -= lr * accum
    (Nesterov: var -= lr * g + lr * momentum * accum)."""

    SLOTS = {"momentum": 0.0}

    def __init__(self, learning_rate, momentum: float, nesterov: bool, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, name="momentum", **kwargs)
        self.momentum, self.nesterov = momentum, nesterov

    def update_step(self, gradient, variable, learning_rate):
        lr = tf.cast(learning_rate, variable.dtype)
        accum = self._slot("momentum", variable)
        self.assign(accum, accum * self.momentum + gradient)
        if self.nesterov:
            self.assign_sub(variable, gradient * lr + accum * self.momentum * lr)
        else:
            self.assign_sub(variable, accum * lr)

    def get_config(self) -> dict:
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class TF1Adagrad(_TF1Optimizer):
    """``tf.train.AdagradOptimizer`` (initial accumulator 0.1): accum += g^2;
    var -= lr * g * rsqrt(accum)."""

    SLOTS = {"accumulator": 0.1}

    def __init__(self, learning_rate, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, name="adagrad", **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        lr = tf.cast(learning_rate, variable.dtype)
        accum = self._slot("accumulator", variable)
        self.assign_add(accum, tf.square(gradient))
        self.assign_sub(variable, lr * gradient * tf.math.rsqrt(accum))


class TF1RMSProp(_TF1Optimizer):
    """``tf.train.RMSPropOptimizer`` (decay 0.9, momentum 0, epsilon 1e-10, mean square
    starting at 1): ms += (g^2 - ms)(1 - decay); mom = momentum * mom + lr g / sqrt(ms + eps);
    var -= mom."""

    SLOTS = {"rms": 1.0, "momentum": 0.0}
    DECAY, MOMENTUM, EPSILON = 0.9, 0.0, 1e-10

    def __init__(self, learning_rate, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, name="rms_prop", **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        lr = tf.cast(learning_rate, variable.dtype)
        ms, mom = self._slot("rms", variable), self._slot("momentum", variable)
        self.assign_add(ms, (tf.square(gradient) - ms) * (1.0 - self.DECAY))
        self.assign(mom, mom * self.MOMENTUM + gradient * lr / tf.sqrt(ms + self.EPSILON))
        self.assign_sub(variable, mom)


class TF1Ftrl(_TF1Optimizer):
    """``tf.train.FtrlOptimizer`` (learning_rate_power -0.5, initial accumulator 0.1, no l1/l2
    regularisation): the FTRL-proximal closed form of ``ApplyFtrl``."""

    SLOTS = {"accumulator": 0.1, "linear": 0.0}

    def __init__(self, learning_rate, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, name="ftrl", **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        lr = tf.cast(learning_rate, variable.dtype)
        accum, linear = self._slot("accumulator", variable), self._slot("linear", variable)
        new_accum = accum + tf.square(gradient)
        self.assign_add(linear, gradient - (tf.sqrt(new_accum) - tf.sqrt(accum)) / lr * variable)
        # l1 = l2 = 0: x = -linear, y = sqrt(new_accum) / lr; var = x / y where |linear| > 0.
        quadratic = tf.sqrt(new_accum) / lr
        self.assign(variable, tf.where(tf.abs(linear) > 0.0, -linear / quadratic, 0.0))
        self.assign(accum, new_accum)
