"""Learning-rate schedules as T2T evaluates them
(``tensor2tensor/utils/learning_rate.py``, ``learning_rate_schedule``).

``legacy`` with decay scheme ``noam`` is the paper's formula evaluated at step s+1 (with
T2T's Adam correction factor 0.002 x 5000 x learning_rate); any other schedule string is a
product of named factors (``constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size``). The
step s is the number of updates already applied (Keras ``optimizer.iterations``), so the
first update of a v3 schedule has lr 0 exactly as in T2T.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.hparam import HParamsError

FACTORS = (
    "constant",
    "linear_warmup",
    "rsqrt_decay",
    "rsqrt_normalized_decay",
    "rsqrt_hidden_size",
    "legacy",
    "linear_decay",
    "cosdecay",
)
SCHEDULE_HPARAMS = (
    "learning_rate",
    "learning_rate_schedule",
    "learning_rate_constant",
    "learning_rate_decay_scheme",
    "learning_rate_warmup_steps",
    "hidden_size",
    "optimizer",
    "train_steps",
)


def _legacy(step: tf.Tensor, hp: dict) -> tf.Tensor:
    if hp["learning_rate_decay_scheme"] != "noam":
        raise HParamsError(
            f"learning_rate_decay_scheme={hp['learning_rate_decay_scheme']!r} is not supported "
            "with the legacy schedule; use 'noam' or a factor string such as "
            "'constant*linear_warmup*rsqrt_decay'."
        )
    warmup = float(hp["learning_rate_warmup_steps"])
    s = step + 1.0
    noam = 5000.0 * hp["hidden_size"] ** -0.5 * tf.minimum(s * warmup**-1.5, s**-0.5)
    adam_correction = 0.002 if "adam" in hp["optimizer"].lower() else 1.0
    return noam * hp["learning_rate"] * adam_correction


def _factor(name: str, step: tf.Tensor, hp: dict) -> tf.Tensor:
    warmup = float(hp["learning_rate_warmup_steps"])
    if name == "constant":
        return tf.constant(hp["learning_rate_constant"], tf.float32)
    if name == "linear_warmup":
        return tf.minimum(1.0, step / warmup)
    if name == "rsqrt_decay":
        return tf.math.rsqrt(tf.maximum(step, warmup))
    if name == "rsqrt_normalized_decay":
        return tf.math.rsqrt(tf.maximum(step, warmup)) * warmup**0.5
    if name == "rsqrt_hidden_size":
        return tf.constant(hp["hidden_size"] ** -0.5, tf.float32)
    if name == "legacy":
        return _legacy(step, hp)
    train_steps = float(max(hp.get("train_steps", 0), 1))
    if name == "linear_decay":
        return tf.clip_by_value((train_steps - step) / max(train_steps - warmup, 1.0), 0.0, 1.0)
    if name == "cosdecay":
        progress = tf.clip_by_value((step - warmup) / max(train_steps - warmup, 1.0), 0.0, 1.0)
        return 0.5 * (1.0 + tf.cos(3.141592653589793 * progress))
    raise HParamsError(
        f"Unknown learning-rate factor {name!r} in learning_rate_schedule; "
        f"known factors: {', '.join(FACTORS)}."
    )


def learning_rate_at(step, hparams: dict) -> tf.Tensor:
    """The learning rate for 0-based update ``step`` under ``hparams`` (a dict of values)."""
    step = tf.cast(step, tf.float32)
    schedule = hparams["learning_rate_schedule"]
    if schedule == "legacy":
        return _legacy(step, hparams)
    result = tf.constant(1.0, tf.float32)
    for name in schedule.split("*"):
        result *= _factor(name.strip(), step, hparams)
    return result


def check_schedule(hparams: dict) -> None:
    """Raises HParamsError for an unknown optimizer or schedule factor (before any work)."""
    from t2t_repro.optimizers.names import check_optimizer_name  # (it imports this module)

    check_optimizer_name(hparams.get("optimizer", "adam"))
    learning_rate_at(0, {k: hparams[k] for k in SCHEDULE_HPARAMS if k in hparams})


class T2TSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """A serializable Keras schedule wrapping ``learning_rate_at``."""

    def __init__(self, hparams: dict) -> None:
        self.hparams = {k: hparams[k] for k in SCHEDULE_HPARAMS if k in hparams}
        learning_rate_at(0, self.hparams)  # Fail now on an unknown factor, not mid-training.

    def __call__(self, step):
        return learning_rate_at(step, self.hparams)

    def get_config(self) -> dict:
        return {"hparams": self.hparams}
