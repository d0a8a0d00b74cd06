"""Learning-rate schedules as T2T 1.15.7 evaluates them
(``tensor2tensor/utils/learning_rate.py``, ``learning_rate_schedule``).

A schedule string is a product of T2T's named factors (``constant*linear_warmup*rsqrt_decay*
rsqrt_hidden_size``); ``legacy`` is T2T's older schedule (``learning_rate_legacy.py``: the
paper's ``noam`` formula with T2T's Adam correction, or a warm-up and a decay scheme). Each
factor reads the hparams T2T's reads, computed in float32 with T2T's operations, so the values
are T2T's to float32 rounding (tests/test_learning_rate_t2t.py, against T2T itself).

The step is T2T's global step: the number of updates already applied (Keras
``optimizer.iterations``), so the first update of a v3 schedule has lr 0 exactly as in T2T.
T2T divides it by ``optimizer_multistep_accumulate_steps`` whenever that is set, whatever the
optimizer (``_global_step``); only ``multistep_adam`` accumulates, and then T2T's global step
counts micro-batches (``t2t_steps_per_update``, ``t2t_global_step``).
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

from t2t_repro import t2t_hparams
from t2t_repro.hparam import HParamsError
from t2t_repro.learning_rate_legacy import legacy_schedule
from t2t_repro.optimizer_names import registry_key

FACTORS = (
    "constant",
    "linear_warmup",
    "linear_decay",
    "cosdecay",
    "single_cycle_cos_decay",
    "multi_cycle_cos_decay",
    "rsqrt_decay",
    "rsqrt_normalized_decay",
    "exp_decay",
    "rsqrt_hidden_size",
    "legacy",
)
# What the schedule reads: the names the hparams table gives to this module or its legacy part.
SCHEDULE_HPARAMS = tuple(
    dict.fromkeys(
        t2t_hparams.read_by("learning_rate") + t2t_hparams.read_by("learning_rate_legacy")
    )
)


def _decay_steps(hp: dict, factor: str) -> int:
    steps = hp["learning_rate_decay_steps"]
    if not steps:
        raise HParamsError(
            f"learning-rate factor {factor!r} divides by learning_rate_decay_steps, which is "
            f"{steps!r}; set it > 0 (T2T's default is 5000)."
        )
    return steps


def _pi_over(steps: int) -> tf.Tensor:
    """pi / steps in float32, as T2T's graph has it: TensorFlow's graph optimizer folds T2T's
    ``np.pi * step / steps`` into ``step * (pi / steps)``, which rounds differently where the
    cosine's 1 + cos cancels (tests/test_learning_rate_t2t.py)."""
    return tf.constant(math.pi, tf.float32) / tf.constant(steps, tf.float32)


def _train_steps(hp: dict, factor: str) -> int:
    if hp["train_steps"] is None:
        raise HParamsError(f"learning-rate factor {factor!r} reads train_steps, which is not set.")
    return hp["train_steps"]


def _factor(name: str, step: tf.Tensor, hp: dict) -> tf.Tensor:
    """T2T's ``learning_rate_factor``."""
    warmup = hp["learning_rate_warmup_steps"]
    if name == "constant":
        return tf.constant(hp["learning_rate_constant"], tf.float32)
    if name == "linear_warmup":
        return tf.minimum(1.0, step / float(warmup))
    if name == "linear_decay":
        ret = (_train_steps(hp, name) - step) / _decay_steps(hp, name)
        return tf.minimum(1.0, tf.maximum(0.0, ret))
    if name == "cosdecay":  # 1 up to the end of warm-up, then a periodic cosine of the step
        in_warmup = tf.cast(step <= warmup, tf.float32)
        ret = 0.5 * (1 + tf.cos(step * _pi_over(_decay_steps(hp, name))))
        return in_warmup * 1 + (1 - in_warmup) * ret
    if name == "single_cycle_cos_decay":
        if _train_steps(hp, name) <= warmup:
            raise HParamsError(
                f"single_cycle_cos_decay needs train_steps > learning_rate_warmup_steps (got "
                f"{hp['train_steps']} and {warmup}), as in T2T."
            )
        after = tf.maximum(step, warmup) - warmup
        return tf.cos(after * _pi_over(hp["train_steps"] - warmup)) / 2.0 + 0.5
    if name == "multi_cycle_cos_decay":
        after = tf.maximum(step, warmup) - warmup
        return tf.cos(after * _pi_over(_decay_steps(hp, name))) / 2.0 + 0.5
    if name == "rsqrt_decay":
        return tf.math.rsqrt(tf.maximum(step, float(warmup)))
    if name == "rsqrt_normalized_decay":
        return tf.math.rsqrt(tf.maximum(step, float(warmup))) * float(warmup) ** 0.5
    if name == "exp_decay":
        p = tf.maximum((step - warmup) / _decay_steps(hp, name), 0.0)
        if hp["learning_rate_decay_staircase"]:
            p = tf.floor(p)
        return tf.pow(tf.constant(hp["learning_rate_decay_rate"], tf.float32), p)
    if name == "rsqrt_hidden_size":
        return tf.constant(hp["hidden_size"] ** -0.5, tf.float32)
    if name == "legacy":
        return legacy_schedule(step, hp)
    raise HParamsError(
        f"Unknown learning-rate factor {name!r} in learning_rate_schedule; "
        f"known factors: {', '.join(FACTORS)}."
    )


def schedule_values(hparams: dict) -> dict:
    """The schedule's hparams from ``hparams``; a name it lacks has T2T's default (the table)."""
    return {
        name: hparams[name] if name in hparams else t2t_hparams.default(name)
        for name in SCHEDULE_HPARAMS
    }


def learning_rate_at(step, hparams: dict) -> tf.Tensor:
    """The learning rate at T2T global step ``step`` under ``hparams`` (a dict of values)."""
    hp = schedule_values(hparams)
    step = tf.cast(step, tf.float32)
    multiplier = hp["optimizer_multistep_accumulate_steps"]
    if multiplier:  # T2T's _global_step: whatever the optimizer
        step = step / tf.cast(multiplier, tf.float32)
    if hp["learning_rate_schedule"] == "legacy":
        return legacy_schedule(step, hp)
    result = tf.constant(1.0, tf.float32)
    for name in filter(None, (n.strip() for n in hp["learning_rate_schedule"].split("*"))):
        result *= _factor(name, step, hp)
    return result


def t2t_steps_per_update(optimizer: str, accumulate_steps: int) -> int:
    """T2T global steps (batches) per update: ``optimizer_multistep_accumulate_steps`` under
    ``multistep_adam``, the one optimizer that accumulates (``utils/optimize.py``,
    ``multistep_adam``); 1 under any other, which updates every batch while
    ``learning_rate.py, _global_step`` still divides the schedule's step."""
    if registry_key(str(optimizer)) == "multistep_adam":
        return max(1, accumulate_steps or 1)
    return 1


def t2t_global_step(update, accumulate_steps: int):
    """T2T's global step when it applies 0-based update ``update``. With gradient accumulation
    over n > 1 micro-batches T2T's global step counts micro-batches and its
    ``MultistepAdamOptimizer`` applies on the n-th (``utils/multistep_optimizer.py``: its
    ``iter`` starts at 1 and applies at 0), so update u is applied at global step u*n + n-1."""
    if accumulate_steps > 1:
        return update * accumulate_steps + (accumulate_steps - 1)
    return update


def check_schedule(hparams: dict) -> None:
    """Raises HParamsError (one line) for a schedule factor or decay scheme not implemented
    here, or hparams the schedule cannot run with (before any work; the optimizer's name is
    checked by ``optimizer_names.py``)."""
    values = dict(hparams)
    # train_steps comes with the run (--train_steps); checking names and other values
    # needs none of it
    values.setdefault("train_steps", values.get("learning_rate_warmup_steps", 0) + 1)
    learning_rate_at(0, values)


class T2TSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """A serializable Keras schedule: T2T's learning rate at the global step T2T has when it
    applies update ``iterations`` (``t2t_global_step``)."""

    def __init__(self, hparams: dict) -> None:
        self.hparams = schedule_values(hparams)
        learning_rate_at(0, self.hparams)  # Fail now on an unknown factor, not mid-training.
        self.steps_per_update = t2t_steps_per_update(
            self.hparams["optimizer"], self.hparams["optimizer_multistep_accumulate_steps"]
        )

    def __call__(self, step):
        return learning_rate_at(t2t_global_step(step, self.steps_per_update), self.hparams)

    def get_config(self) -> dict:
        return {"hparams": self.hparams}
