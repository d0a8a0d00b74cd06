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
from t2t_repro.decoding.nested import join_nested, split_nested


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
