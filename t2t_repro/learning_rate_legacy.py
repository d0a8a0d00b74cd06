"""T2T's ``legacy`` learning rate: the paper's ``noam`` formula, or a warm-up followed by one of
T2T's decay schemes (``tensor2tensor/utils/learning_rate.py``, ``legacy_learning_rate_schedule``,
``_learning_rate_warmup``, ``_learning_rate_decay``), in float32 with T2T's operations in T2T's
order, so that the values are T2T's to float32 rounding.

``step`` is T2T's ``_global_step``: the global step, divided by
``optimizer_multistep_accumulate_steps`` when that is set (``learning_rate.py`` does it).
"""

from __future__ import annotations

import math

import tensorflow as tf

from t2t_repro.hparam import HParamsError

# The schemes of ``_learning_rate_decay``; "" is T2T's falsy scheme, the same as "none".
DECAY_SCHEMES = ("noam", "none", "", "exp", "piecewise", "cosine", "sqrt")
# T2T 1.15.7's cyclelinear10x calls ``float()`` on a tensor: its graph-mode trainer fails on it
# (tools/t2t_reference/make_t2t_lr_reference.py records the failure), so no value is T2T's.
REFUSED_SCHEMES = {
    "cyclelinear10x": "T2T 1.15.7's own cyclelinear10x fails in its graph-mode trainer "
    "(float() of a tensor in _learning_rate_decay), so no run of T2T has a value to match",
}
WARMUPS = ("exp", "linear")


def learning_rate_warmup(step: tf.Tensor, warmup_steps: int, schedule: str = "exp") -> tf.Tensor:
    """T2T's ``_learning_rate_warmup`` (the legacy schedule always asks for "exp")."""
    if not warmup_steps:
        return tf.constant(1.0)
    warmup = tf.cast(warmup_steps, tf.float32)
    if schedule == "exp":
        return tf.exp(tf.math.log(tf.constant(0.01)) / warmup) ** (warmup - step)
    if schedule != "linear":
        raise HParamsError(f"learning-rate warm-up {schedule!r} is not T2T's; use exp or linear.")
    start = tf.constant(0.35)
    return ((tf.constant(1.0) - start) / warmup) * step + start


def _piecewise(step: tf.Tensor, hp: dict) -> tf.Tensor:
    """T2T's ``_piecewise_learning_rate`` (``tf.train.piecewise_constant``: the first value
    up to and including the first boundary, multipliers not cumulative)."""
    boundaries, multiples = hp.get("learning_rate_boundaries"), hp.get("learning_rate_multiples")
    if not isinstance(boundaries, list | tuple) or not isinstance(multiples, list | tuple):
        raise HParamsError(
            "learning_rate_decay_scheme='piecewise' reads the lists learning_rate_boundaries and "
            "learning_rate_multiples (as T2T's distillation sets add them): add both to the set."
        )
    if len(boundaries) != len(multiples):
        raise HParamsError(
            f"learning_rate_boundaries has {len(boundaries)} steps and learning_rate_multiples "
            f"{len(multiples)} values; piecewise needs one multiple per boundary."
        )
    values = [1.0, *multiples]
    result = tf.constant(values[-1], tf.float32)
    for boundary, value in reversed(list(zip(boundaries, values[:-1], strict=True))):
        result = tf.where(step <= float(boundary), tf.constant(value, tf.float32), result)
    return result


def learning_rate_decay(step: tf.Tensor, hp: dict, warmup_steps: int) -> tf.Tensor:
    """T2T's ``_learning_rate_decay``."""
    scheme = hp["learning_rate_decay_scheme"]
    warmup = tf.cast(warmup_steps, tf.float32)
    if not scheme or scheme == "none":
        return tf.constant(1.0)
    if scheme == "exp":
        p = (step - warmup) / hp["learning_rate_decay_steps"]
        if hp["learning_rate_decay_staircase"]:
            p = tf.floor(p)
        return tf.pow(tf.constant(hp["learning_rate_decay_rate"], tf.float32), p)
    if scheme == "piecewise":
        return _piecewise(step, hp)
    if scheme == "cosine":
        cycle_steps = hp["learning_rate_cosine_cycle_steps"]
        position = tf.math.floormod(step, tf.constant(2 * cycle_steps, tf.float32))
        position = cycle_steps - tf.abs(cycle_steps - position)
        pi_over = tf.constant(math.pi, tf.float32) / tf.constant(cycle_steps, tf.float32)
        return 0.5 * (1 + tf.cos(position * pi_over))  # folded as T2T's graph folds it
    if scheme == "sqrt":
        return 500.0 / tf.sqrt(tf.maximum(step - warmup, 1.0))
    raise unknown_scheme(scheme)


def unknown_scheme(scheme: str) -> HParamsError:
    if scheme in REFUSED_SCHEMES:
        return HParamsError(
            f"learning_rate_decay_scheme={scheme!r} is refused: {REFUSED_SCHEMES[scheme]}; "
            f"use one of {', '.join(s for s in DECAY_SCHEMES if s)}."
        )
    return HParamsError(
        f"learning_rate_decay_scheme={scheme!r} is not one of T2T's decay schemes "
        f"({', '.join(s for s in DECAY_SCHEMES if s)})."
    )


def adam_correction(optimizer: str) -> float:
    """T2T's factor for Adam in the legacy schedule: its test is case-sensitive, so
    ``optimizer="Adam"`` (which T2T's optimizer registry accepts) gets 1.0."""
    return 0.002 if "adam" in optimizer else 1.0


def legacy_schedule(step: tf.Tensor, hp: dict) -> tf.Tensor:
    """T2T's ``legacy_learning_rate_schedule``. ``noam`` keeps this project's earlier float32
    expression (bit-identical to before issue #53; within 2 float32 roundings of T2T's order of
    the same operations, tests/test_learning_rate_t2t.py)."""
    warmup_steps = hp["learning_rate_warmup_steps"]
    correction = adam_correction(hp["optimizer"])
    if hp["learning_rate_decay_scheme"] == "noam":
        warmup = float(warmup_steps)
        s = step + 1.0
        # T2T's 0 warmup steps: float32 0**-1.5 is inf there, so the minimum is s**-0.5
        rise = warmup**-1.5 if warmup else float("inf")
        noam = 5000.0 * hp["hidden_size"] ** -0.5 * tf.minimum(s * rise, s**-0.5)
        return noam * hp["learning_rate"] * correction
    warmup = learning_rate_warmup(step, warmup_steps)
    decay = learning_rate_decay(step, hp, warmup_steps)
    ret = tf.where(step < warmup_steps, warmup, decay)
    return ret * correction * hp["learning_rate"]
