"""Keeps the cache entries that no decoding step changes out of the search's loop state.

T2T's beam search (``tensor2tensor/utils/beam_search.py``, ``beam_search``) reorders the whole
cache by the surviving beams' parents at every step, the encoder-decoder keys/values included,
although every beam of one sentence holds the same copy of them. Here those entries are tiled
to the beam once, captured by the step function, and never gathered: the same values reach the
model, so the search's results do not change; only the per-step copying goes.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.decoding.beam_search import expand_to_beam, merge_beam_dim


def split_nested(cache: dict, constant_keys) -> tuple[dict, dict]:
    """(changing, constant): ``cache``'s nested dicts split by key name, structure kept."""
    changing, constant = {}, {}
    for key, value in cache.items():
        if key in constant_keys:
            constant[key] = value
        elif isinstance(value, dict):
            changing[key], inner = split_nested(value, constant_keys)
            if inner:
                constant[key] = inner
        else:
            changing[key] = value
    return changing, constant


def join_nested(changing: dict, constant: dict) -> dict:
    """The inverse of ``split_nested``."""
    joined = dict(changing)
    for key, value in constant.items():
        joined[key] = join_nested(joined[key], value) if key in joined else value
    return joined


def hoist_constants(step, cache: dict, constant_keys, beam_size: int):
    """(step, state): ``step(ids, i, state)`` with the constant entries of ``cache`` tiled to
    the beam once and joined back at every call; ``state`` holds only the changing entries."""
    state, constant = split_nested(cache, constant_keys)
    if not constant:
        return step, cache
    if beam_size > 1:  # The search calls the step with [B*beam, ...] tensors.
        constant = tf.nest.map_structure(
            lambda t: merge_beam_dim(expand_to_beam(t, beam_size)), constant
        )

    def step_with_constants(ids, i, changing):
        logits, new_cache = step(ids, i, join_nested(changing, constant))
        return logits, split_nested(new_cache, constant_keys)[0]

    return step_with_constants, state
