"""T2T's Adafactor (``tensor2tensor/utils/adafactor.py``, ``AdafactorOptimizer``), not Keras'.

Keras' ``Adafactor`` is another algorithm (its own relative step, no ``decay_type``, no
``1e-30`` floor on the squared gradient, no momentum); this one is T2T's update rule line by
line: factored second moments over the last two dimensions of every variable of rank >= 2
(``vr``/``vc``), a full one (``v``) otherwise; the decay rate ``adam`` or ``pow``
(``adafactor_decay_rate_adam`` / ``_pow``, from the global step = the updates already
applied); the learning rate times the parameter scale ``max(rms(var), 1e-3)``; update
clipping; optional momentum (``beta1``). ``adafactor_optimizer_from_hparams`` does not pass
``epsilon1``/``epsilon2``, so T2T always uses 1e-30 and 1e-3.

T2T splits each symbol-modality embedding into ``symbol_modality_num_shards`` row blocks
(``layers/modalities.py``, ``_get_weights``: the first ``vocab % n`` blocks one row longer),
and Adafactor treats each block as a variable of its own: its own parameter scale, clipping
and factored moments. This project keeps the embedding in one matrix, which its layer marks
(``t2t_row_sharded``); the update here runs block by block, as T2T's does (``vr`` concatenated,
``vc`` one row per block).

T2T's ``attention_variables_3d`` makes q, k, v and o rank-3 variables, which Adafactor factors
over their last two dimensions; here they are the same matrices as 2-D kernels, marked with
T2T's shape (``t2t_shape``, ``layers/attention.py``), and updated in that shape.

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


def check_decay_type(decay_type: str) -> None:
    """adafactor_optimizer_from_hparams: ValueError("unknown optimizer_adafactor_decay_type")."""
    if decay_type not in DECAY_TYPES:
        raise HParamsError(
            f"optimizer_adafactor_decay_type={decay_type!r} is unknown to T2T; use 'adam' or 'pow'."
        )


def t2t_row_shards(rows: int, num_shards: int) -> list[int]:
    """T2T's block sizes of a ``rows``-row embedding (``modalities.py``, ``_get_weights``)."""
    return [rows // num_shards + (1 if i < rows % num_shards else 0) for i in range(num_shards)]


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
        num_shards: int = 1,
        name: str = "adafactor",
        **kwargs,
    ) -> None:
        check_decay_type(decay_type)
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.decay_type = decay_type
        self.beta2 = beta2
        self.memory_exponent = memory_exponent
        self.beta1 = beta1
        self.clipping_threshold = clipping_threshold
        self.factored = factored
        self.multiply_by_parameter_scale = multiply_by_parameter_scale
        self.num_shards = num_shards

    def _factored(self, shape) -> bool:
        return bool(self.factored) and len(shape) >= 2

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._m, self._vr, self._vc, self._v, self._shards = [], [], [], [], []
        self._t2t_shapes = []  # T2T's rank-3 attention variables' shapes (None: the variable's)
        for var in var_list:
            t2t_shape = getattr(var, "t2t_shape", None)
            self._t2t_shapes.append(t2t_shape)
            shape = tuple(t2t_shape or var.shape)
            name = var.path.replace("/", "_")
            shards = None
            if getattr(var, "t2t_row_sharded", False) and self.num_shards > 1:
                shards = t2t_row_shards(shape[0], self.num_shards)
            self._shards.append(shards)
            self._m.append(self.add_variable_from_reference(var, "m") if self.beta1 else None)
            if self._factored(shape):
                columns = shape[:-2] + shape[-1:]
                columns = (len(shards),) + columns if shards else columns
                self._vr.append(self.add_variable(shape[:-1], name=f"{name}_vr"))
                self._vc.append(self.add_variable(columns, name=f"{name}_vc"))
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

    def _scaled_update(self, grad, old_val, decay_rate, learning_rate, moments):
        """``AdafactorOptimizer._resource_apply_dense`` for one T2T variable, in its order of
        operations, up to momentum: (update_scale * x, the new second moments)."""
        grad_squared = tf.square(grad) + EPSILON1
        grad_squared_mean = tf.reduce_mean(grad_squared)
        update_scale = learning_rate
        if self.multiply_by_parameter_scale:
            update_scale *= tf.maximum(_rms(old_val), EPSILON2)
        # T2T's "HACK" (keeps XLA from fusing across variables); kept for T2T's rounding.
        decay_rate += grad_squared_mean * 1e-30
        update_scale += grad_squared_mean * 1e-30
        mixing_rate = 1.0 - decay_rate
        if len(moments) == 2:
            vr, vc = moments
            new_vr = decay_rate * vr + mixing_rate * tf.reduce_mean(grad_squared, -1)
            new_vc = decay_rate * vc + mixing_rate * tf.reduce_mean(grad_squared, -2)
            long_term_mean = tf.reduce_mean(new_vr, -1, keepdims=True)
            r_factor = tf.math.rsqrt(new_vr / long_term_mean)
            c_factor = tf.math.rsqrt(new_vc)
            x = grad * tf.expand_dims(r_factor, -1) * tf.expand_dims(c_factor, -2)
            new_moments = (new_vr, new_vc)
        else:
            new_v = decay_rate * moments[0] + mixing_rate * grad_squared
            x = grad * tf.math.rsqrt(new_v)
            new_moments = (new_v,)
        x /= tf.maximum(1.0, _rms(x) / self.clipping_threshold)
        return update_scale * x, new_moments

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        t2t_shape = self._t2t_shapes[index]
        grad = tf.cast(gradient, tf.float32)
        decay_rate = self._decay_rate(tf.cast(self.iterations, tf.float32))
        learning_rate = tf.cast(learning_rate, tf.float32)
        value = old_val = tf.convert_to_tensor(variable)
        if t2t_shape:
            grad, old_val = tf.reshape(grad, t2t_shape), tf.reshape(value, t2t_shape)
        factored = self._vr[index] is not None
        slots = (self._vr[index], self._vc[index]) if factored else (self._v[index],)
        moments = [tf.convert_to_tensor(slot) for slot in slots]
        shards = self._shards[index]
        if shards is None:
            subtrahend, new_moments = self._scaled_update(
                grad, old_val, decay_rate, learning_rate, moments
            )
        else:  # T2T's row blocks, each a variable of its own
            blocks = [tf.split(t, shards, 0) for t in (grad, old_val)]
            if factored:
                blocks += [tf.split(moments[0], shards, 0), tf.unstack(moments[1], axis=0)]
            else:
                blocks += [tf.split(moments[0], shards, 0)]
            parts = [
                self._scaled_update(g, w, decay_rate, learning_rate, block_moments)
                for g, w, *block_moments in zip(*blocks, strict=True)
            ]
            subtrahend = tf.concat([p[0] for p in parts], 0)
            new_moments = [tf.concat([p[1][0] for p in parts], 0)]
            if factored:
                new_moments.append(tf.stack([p[1][1] for p in parts], 0))
        for slot, moment in zip(slots, new_moments, strict=True):
            self.assign(slot, moment)
        if t2t_shape:
            subtrahend = tf.reshape(subtrahend, value.shape)
        if self.beta1:
            m = self._m[index]
            subtrahend = self.beta1 * m + (1.0 - self.beta1) * subtrahend
            self.assign(m, subtrahend)
        self.assign(variable, value - subtrahend)

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
            num_shards=self.num_shards,
        )
        return config
