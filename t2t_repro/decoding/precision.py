"""Decoding in bfloat16: the model is built under Keras's mixed policy (variables float32, as
in the checkpoint; layers compute in bfloat16), so matmuls use the CPU's bf16 instructions.

The default is the model's: float32, whose decodes are T2T's id for id, unless it was trained
with T2T's activation_dtype=bfloat16 or float16, which T2T's model computes in that type when
decoding too (``runner.py``). Otherwise bfloat16 decodes may differ (rounding), which is why
only asking switches it on. float16 is a GPU's type (a CPU computes it slowly).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keras

DECODE_PRECISIONS = ("", "float32", "bfloat16", "float16")


@contextmanager
def decoding_policy(precision: str) -> Iterator[None]:
    """Models built inside compute in ``precision`` ("" or "float32": unchanged)."""
    if precision not in DECODE_PRECISIONS:
        raise ValueError(
            f"decode precision {precision!r}: use one of {', '.join(map(repr, DECODE_PRECISIONS))}."
        )
    if precision in ("", "float32"):
        yield
        return
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(f"mixed_{precision}")
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
