"""Beam search with T2T's semantics (``tensor2tensor/utils/beam_search.py``, ``beam_search``),
in static shapes.

Everything runs inside ``tf.function(jit_compile=True)``: the loop variables keep fixed shapes.
Sequences live in a ``[B, beam, decode_length + 1]`` buffer (column 0 = initial id, column
j + 1 = token of step j, zeros after), as in T2T's TPU path, instead of growing by a column per
step. The model cache is kept as ``[B, beam, ...]`` and merged to ``[B*beam, ...]`` around each
``symbols_to_logits_fn(ids, i, cache) -> (logits [B*beam, V], cache)`` call.

One difference in cost only, not in results: T2T gathers the cache by the 2*beam candidates'
parents and then again by the beam survivors. Here the two indices are composed and the cache
is gathered once.

Another, with ``position_keys`` (the model's self-attention buffers, written one position per
step): those buffers are never reordered. Each beam writes its step-``i`` keys/values into its
own row at position ``i``, in place, and an ancestry table says, for every alive beam and
position, which row holds that position of its history; the step sees the buffers gathered by
it. The step reads the same values as with a reordered cache (unwritten positions are zero in
both), so ids and scores do not change. Why: under XLA a reordered buffer is a new buffer that
is then copied back into the loop's state, a whole extra copy of the cache per step.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.decoding.nested import join_nested, split_nested
from t2t_repro.decoding.top_k import top_k
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

INF = 1.0 * 1e7


def shape_list(x: tf.Tensor) -> list:
    """Static dimensions where known, dynamic scalars otherwise (one unstacked ``tf.shape``,
    built only when a dimension is unknown)."""
    static = x.shape.as_list()
    if None not in static:
        return static
    dynamic = tf.unstack(tf.shape(x), num=len(static))
    return [d if d is not None else dynamic[k] for k, d in enumerate(static)]


def expand_to_beam(tensor: tf.Tensor, beam_size: int) -> tf.Tensor:
    """[B, ...] -> [B, beam, ...] by tiling."""
    tensor = tf.expand_dims(tensor, 1)
    return tf.tile(tensor, [1, beam_size] + [1] * (tensor.shape.rank - 2))


def merge_beam_dim(tensor: tf.Tensor) -> tf.Tensor:
    """[B, beam, ...] -> [B*beam, ...]."""
    shape = shape_list(tensor)
    return tf.reshape(tensor, [shape[0] * shape[1]] + shape[2:])


def unmerge_beam_dim(tensor: tf.Tensor, batch_size, beam_size: int) -> tf.Tensor:
    """[B*beam, ...] -> [B, beam, ...]."""
    return tf.reshape(tensor, [batch_size, beam_size] + shape_list(tensor)[1:])


def gather_beams(tensor: tf.Tensor, beam_indices: tf.Tensor) -> tf.Tensor:
    """``out[b, k] = tensor[b, beam_indices[b, k]]``: [B, n, ...] with [B, k] -> [B, k, ...]."""
    return tf.gather(tensor, beam_indices, axis=1, batch_dims=1)


def length_penalty(length, alpha) -> tf.Tensor:
    """GNMT penalty ((5 + length) / 6) ** alpha."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def log_prob_from_logits(logits: tf.Tensor) -> tf.Tensor:
    """``common_layers.log_prob_from_logits``."""
    return logits - tf.reduce_logsumexp(logits, axis=-1, keepdims=True)


def gather_positions(buffer: tf.Tensor, rows: tf.Tensor) -> tf.Tensor:
    """``out[n, :, t] = buffer[rows[n, t], :, t]``: a [N, h, L, d] buffer, [N, L] row indices."""
    n, heads, length = shape_list(buffer)[:3]
    shape = [n, heads, length]
    index = tf.stack(
        [
            tf.broadcast_to(rows[:, None, :], shape),
            tf.broadcast_to(tf.range(heads)[None, :, None], shape),
            tf.broadcast_to(tf.range(length)[None, None, :], shape),
        ],
        axis=-1,
    )
    return tf.gather_nd(buffer, index)


def write_row_position(buffer: tf.Tensor, written: tf.Tensor, i) -> tf.Tensor:
    """``buffer`` [N, h, L, d] with position ``i`` taken from ``written`` (same shape)."""
    n, heads = shape_list(buffer)[:2]
    values = written[:, :, i]  # [N, h, d]
    rows = tf.broadcast_to(tf.range(n)[:, None], [n, heads])
    heads_index = tf.broadcast_to(tf.range(heads)[None, :], [n, heads])
    at = tf.stack([rows, heads_index, tf.fill([n, heads], i)], axis=-1)
    return tf.tensor_scatter_nd_update(buffer, at, values)


def _top_beams(scores, k, *tensors):
    """Top k of ``scores`` [B, n] (ties: lower index first); gathers ``tensors`` alike."""
    _, indices = tf.math.top_k(scores, k=k)
    return tuple(gather_beams(t, indices) for t in tensors)


def beam_search(
    symbols_to_logits_fn,
    initial_ids,
    beam_size: int,
    decode_length: int,
    vocab_size: int,
    alpha,
    states=None,
    eos_id: int = EOS_ID,
    stop_early: bool | tf.Tensor = True,
    constrain_fn=None,
    max_steps=None,
    position_keys=(),
):
    """Returns (ids [B, beam, decode_length + 1] int32, scores [B, beam]), best first.

    Column 0 of ``ids`` is the initial id; callers strip it. Scores are length-normalised
    log-probs of finished hypotheses, or raw log-probs of the alive beams for a batch item
    that finished nothing (T2T's fallback). ``states`` ([B, ...] tensors) is tiled to the beam.
    ``decode_length``, ``beam_size`` and ``vocab_size`` must be Python ints (static shapes).
    ``max_steps`` (default ``decode_length``; may be a tensor) is T2T's decode length: the
    steps run and the length penalty bound; ``decode_length`` then only sizes the buffers, so
    inputs rounded up to a few lengths share one compiled search.
    ``constrain_fn(log_probs [N, V], ids [N, D+1], i, states) -> (log_probs, states)``, if
    given, masks each step's log-probs (``decoding/constraints.py``); None leaves search as T2T's.
    ``position_keys`` names the ``states`` entries (nested keys) that are [B, h, L, d] buffers
    the step writes at position ``i`` of axis 2 and reads at positions up to ``i`` only: they
    stay in place, read through an ancestry table (see the module's docstring).
    ``stop_early``: T2T's stop rule (``tensor2tensor/utils/beam_search.py``,
    ``_is_not_finished``): true, once each item's best finished hypothesis beats its best
    alive one's bound; false (``return_beams``), once the worst finished score over the whole
    batch beats every item's bound. A scalar bool tensor chooses at run time (the SavedModel's
    two signatures share one search graph).
    """
    initial_ids = tf.convert_to_tensor(initial_ids, tf.int32)
    batch_size = shape_list(initial_ids)[0]
    length = decode_length + 1
    max_steps = decode_length if max_steps is None else max_steps
    alpha = tf.cast(alpha, tf.float32)
    positions = tf.range(length)

    alive_log_probs = tf.tile(tf.constant([[0.0] + [-INF] * (beam_size - 1)]), [batch_size, 1])
    alive_seq = tf.pad(
        expand_to_beam(initial_ids, beam_size)[:, :, None], [[0, 0], [0, 0], [0, decode_length]]
    )
    states = tf.nest.map_structure(lambda s: expand_to_beam(s, beam_size), states or {})
    # In-place position buffers, [B*beam, h, L, d], and ancestry[b, k, t]: the beam (row of
    # batch item b) whose position t beam k's history is; beam k itself from position i on.
    states, buffers = split_nested(states, position_keys)
    buffers = tf.nest.map_structure(merge_beam_dim, buffers)
    buffer_length = shape_list(tf.nest.flatten(buffers)[0])[2] if buffers else 1
    own_beam = tf.range(beam_size)[None, :, None]
    ancestry = tf.broadcast_to(own_beam, [batch_size, beam_size, buffer_length])
    row_base = (tf.range(batch_size) * beam_size)[:, None, None]
    finished_seq = tf.zeros_like(alive_seq)
    finished_scores = tf.fill([batch_size, beam_size], -INF)
    finished_flags = tf.zeros([batch_size, beam_size], tf.bool)

    def grow_topk(i, alive_seq, alive_log_probs, states, buffers, ancestry):
        """Extends every alive beam by every token; keeps the top 2*beam by normalised score."""
        flat_ids = merge_beam_dim(alive_seq)
        flat_states = tf.nest.map_structure(merge_beam_dim, states)
        if buffers:
            rows = tf.reshape(ancestry + row_base, [-1, buffer_length])
            histories = tf.nest.map_structure(lambda b: gather_positions(b, rows), buffers)
            flat_states = join_nested(flat_states, histories)
        flat_logits, flat_states = symbols_to_logits_fn(flat_ids, i, flat_states)
        if buffers:
            flat_states, written = split_nested(flat_states, position_keys)
            buffers = tf.nest.map_structure(
                lambda b, w: write_row_position(b, w, i), buffers, written
            )
        if constrain_fn is None:
            logits = tf.reshape(
                tf.cast(flat_logits, tf.float32), [batch_size, beam_size, vocab_size]
            )
            log_probs = log_prob_from_logits(logits)
        else:  # Masked log-probs (decoding/constraints.py); its state lives in flat_states.
            flat_log_probs, flat_states = constrain_fn(
                log_prob_from_logits(tf.cast(flat_logits, tf.float32)), flat_ids, i, flat_states
            )
            log_probs = tf.reshape(flat_log_probs, [batch_size, beam_size, vocab_size])
        states = tf.nest.map_structure(
            lambda t: unmerge_beam_dim(t, batch_size, beam_size), flat_states
        )
        log_probs = log_probs + tf.expand_dims(alive_log_probs, 2)
        penalty = length_penalty(i + 1, alpha)
        flat_scores = tf.reshape(log_probs / penalty, [batch_size, beam_size * vocab_size])
        topk_scores, topk_flat_ids = top_k(flat_scores, 2 * beam_size)  # tf.math.top_k's
        topk_log_probs = topk_scores * penalty  # Recovered as T2T does (not re-gathered).
        topk_parents = topk_flat_ids // vocab_size
        topk_ids = topk_flat_ids % vocab_size
        topk_seq = tf.where(
            positions == i + 1, tf.expand_dims(topk_ids, 2), gather_beams(alive_seq, topk_parents)
        )
        topk_finished = tf.equal(topk_ids, eos_id)
        return topk_seq, topk_log_probs, topk_scores, topk_finished, topk_parents, states, buffers

    def body(
        i,
        alive_seq,
        alive_log_probs,
        finished_seq,
        finished_scores,
        finished_flags,
        states,
        buffers,
        ancestry,
    ):
        topk_seq, topk_log_probs, topk_scores, topk_finished, topk_parents, states, buffers = (
            grow_topk(i, alive_seq, alive_log_probs, states, buffers, ancestry)
        )
        # grow_alive: drop the candidates that just produced EOS, keep the top beam.
        alive_scores = topk_scores + tf.cast(topk_finished, tf.float32) * -INF
        alive_seq, alive_log_probs, parents = _top_beams(
            alive_scores, beam_size, topk_seq, topk_log_probs, topk_parents
        )
        states = tf.nest.map_structure(lambda s: gather_beams(s, parents), states)
        if buffers:  # Positions up to i: the parent's history; then the beam itself.
            ancestry = tf.where(
                tf.range(buffer_length) <= i, gather_beams(ancestry, parents), own_beam
            )
        # grow_finished: old finished + newly finished candidates, top beam by normalised score.
        new_scores = topk_scores + (1.0 - tf.cast(topk_finished, tf.float32)) * -INF
        finished_seq, finished_scores, finished_flags = _top_beams(
            tf.concat([finished_scores, new_scores], 1),
            beam_size,
            tf.concat([finished_seq, topk_seq], 1),
            tf.concat([finished_scores, new_scores], 1),
            tf.concat([finished_flags, topk_finished], 1),
        )
        return (
            i + 1,
            alive_seq,
            alive_log_probs,
            finished_seq,
            finished_scores,
            finished_flags,
            states,
            buffers,
            ancestry,
        )

    def is_not_finished(
        i,
        unused_alive_seq,
        alive_log_probs,
        unused_finished_seq,
        finished_scores,
        unused_finished_flags,
        unused_states,
        unused_buffers,
        unused_ancestry,
    ):
        max_penalty = length_penalty(max_steps, alpha)
        lower_bound_alive_scores = alive_log_probs[:, 0] / max_penalty
        # The best finished per batch item; return_beams: T2T's worst over the whole batch.
        if not isinstance(stop_early, bool):  # chosen at run time: [B] either way
            finished_bound = tf.where(
                stop_early, tf.reduce_max(finished_scores, axis=1), tf.reduce_min(finished_scores)
            )
        elif stop_early:
            finished_bound = tf.reduce_max(finished_scores, axis=1)
        else:
            finished_bound = tf.reduce_min(finished_scores)
        bound_is_met = tf.reduce_all(finished_bound > lower_bound_alive_scores)
        return tf.logical_and(i < max_steps, tf.logical_not(bound_is_met))

    (_, alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags, *_) = (
        tf.while_loop(
            is_not_finished,
            body,
            [
                tf.constant(0),
                alive_seq,
                alive_log_probs,
                finished_seq,
                finished_scores,
                finished_flags,
                states,
                buffers,
                ancestry,
            ],
        )
    )

    # Batch items that never finished a hypothesis return their alive beams, raw log-probs.
    any_finished = tf.reduce_any(finished_flags, axis=1)
    finished_seq = tf.where(any_finished[:, None, None], finished_seq, alive_seq)
    finished_scores = tf.where(any_finished[:, None], finished_scores, alive_log_probs)
    return finished_seq, finished_scores
