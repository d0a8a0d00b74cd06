"""Beam reordering of the self-attention cache that copies only its written positions (XLA).

After every step, beam search reorders each state tensor by the surviving beams' parents
(``tensor2tensor/utils/beam_search.py``, ``beam_search``: ``gather_nd`` of the whole cache).
The self-attention key/value buffers ([B, beam, h, L, d] here) are the largest of them, and at
step i only positions 0..i hold values: every beam holds zeros after i, so reordering those is
a no-op. Here only a prefix of P >= i + 1 positions is gathered (P the next multiple of
``PREFIX_STEP``) and written back in place; the buffer that results is identical, element for
element, to the fully reordered one, so the search's ids and scores do not change. On average
this halves the copying, which was ~30% of a small model's beam search on a CPU
(``bench/profile_decode_step.py``).

Only under XLA: the write-back is XLA's in-place dynamic-update-slice, and the prefix length
is chosen by a ``switch_case`` over a few static lengths. Without XLA, TensorFlow would copy
the whole buffer to write the prefix back, so the search keeps the full reorder there.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.compiler.tf2xla.python import xla as tfxla

from t2t_repro.decoding.beam_search import gather_beams

PREFIX_STEP = 16
TIME_AXIS = 3  # [B, beam, h, L, d]: the beam search's (unmerged) view of a [N, h, L, d] buffer


def prefix_lengths(buffer_length: int, step: int = PREFIX_STEP) -> list[int]:
    """The static prefix lengths a reorder may copy: multiples of ``step``, then the whole."""
    return [p for p in range(step, buffer_length, step)] + [buffer_length]


def _time_flags(states, time_keys, inside: bool = False):
    """The structure of ``states`` with True at its time-indexed buffers: [B, beam, h, L, d]
    tensors of static length under a key in ``time_keys``."""
    if isinstance(states, dict):
        return {k: _time_flags(v, time_keys, inside or k in time_keys) for k, v in states.items()}
    if isinstance(states, (tuple, list)):
        return type(states)(_time_flags(v, time_keys, inside) for v in states)
    return inside and states.shape.rank == TIME_AXIS + 2 and states.shape[TIME_AXIS] is not None


def prefix_reorder(time_keys):
    """``reorder(states, parents, i)`` for ``beam_search``: the leaves under ``time_keys`` are
    reordered over their first ``i + 1`` positions (rounded up), every other leaf in full."""

    def reorder(states, parents, i):
        flat = tf.nest.flatten(states)
        flags = tf.nest.flatten(_time_flags(states, time_keys))
        buffers = [s for s, is_buffer in zip(flat, flags, strict=True) if is_buffer]
        lengths = {b.shape[TIME_AXIS] for b in buffers}
        if len(lengths) != 1:  # nothing to shorten, or buffers of different lengths
            return tf.nest.map_structure(lambda s: gather_beams(s, parents), states)
        prefixes = prefix_lengths(lengths.pop())

        def branch(prefix):
            def copy_prefix():
                return [
                    tfxla.dynamic_update_slice(
                        b,
                        gather_beams(b[:, :, :, :prefix], parents),
                        tf.zeros([b.shape.rank], tf.int32),
                    )
                    for b in buffers
                ]

            return copy_prefix

        # Positions 0..i are written after step i: the smallest listed prefix >= i + 1.
        index = tf.minimum((i + PREFIX_STEP) // PREFIX_STEP - 1, len(prefixes) - 1)
        reordered = iter(tf.switch_case(index, [branch(p) for p in prefixes]))
        return tf.nest.pack_sequence_as(
            states,
            [
                next(reordered) if is_buffer else gather_beams(s, parents)
                for s, is_buffer in zip(flat, flags, strict=True)
            ],
        )

    return reorder
