"""Greedy decoding as T2T's ``fast_decode`` does it with beam_size = 1
(``tensor2tensor/models/transformer.py``, ``fast_decode``).

Argmax each step; the log-prob of the chosen token is accumulated up to and including the
first EOS; the loop stops when every row has produced EOS or after ``decode_length`` steps.
Rows that finished early keep generating (their later tokens are cut by post-processing).
Static shapes: ids live in a ``[B, decode_length + 1]`` buffer, column 0 = initial id.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.decoding.beam_search import log_prob_from_logits, shape_list
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


def greedy_search(
    symbols_to_logits_fn,
    initial_ids,
    decode_length: int,
    cache,
    eos_id: int = EOS_ID,
    constrain_fn=None,
    max_steps=None,
    choose_fn=None,
):
    """Returns (ids [B, decode_length + 1] int32, log_probs [B] float32). ``constrain_fn`` as
    in ``beam_search``: it masks the log-probs before the argmax; ``max_steps`` too.
    ``choose_fn(log_probs, i) -> ids [B]``, if given, picks each step's tokens instead of the
    argmax (sampling, ``decoding/sampling.py``); the score still adds the model's log-probs
    of the chosen tokens, as T2T's."""
    initial_ids = tf.convert_to_tensor(initial_ids, tf.int32)
    batch_size = shape_list(initial_ids)[0]
    positions = tf.range(decode_length + 1)
    max_steps = decode_length if max_steps is None else max_steps
    ids = tf.pad(initial_ids[:, None], [[0, 0], [0, decode_length]])

    def body(i, ids, hit_eos, log_prob, cache):
        logits, cache = symbols_to_logits_fn(ids, i, cache)
        logits = tf.cast(logits, tf.float32)
        if constrain_fn is None:
            log_probs = log_prob_from_logits(logits)
            if choose_fn is None:
                next_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        else:  # Masked log-probs (decoding/constraints.py); its state lives in the cache.
            log_probs, cache = constrain_fn(log_prob_from_logits(logits), ids, i, cache)
            if choose_fn is None:
                next_id = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
        if choose_fn is not None:
            next_id = choose_fn(log_probs, i)
        chosen = tf.gather(log_probs, next_id[:, None], batch_dims=1)[:, 0]
        log_prob += chosen * (1.0 - tf.cast(hit_eos, tf.float32))
        hit_eos = tf.logical_or(hit_eos, tf.equal(next_id, eos_id))
        ids = tf.where(positions == i + 1, next_id[:, None], ids)
        return i + 1, ids, hit_eos, log_prob, cache

    def is_not_finished(i, unused_ids, hit_eos, *unused):
        return tf.logical_and(i < max_steps, tf.logical_not(tf.reduce_all(hit_eos)))

    _, ids, _, log_prob, _ = tf.while_loop(
        is_not_finished,
        body,
        [
            tf.constant(0),
            ids,
            tf.zeros([batch_size], tf.bool),
            tf.zeros([batch_size]),
            cache if cache is not None else {},
        ],
    )
    return ids, log_prob
