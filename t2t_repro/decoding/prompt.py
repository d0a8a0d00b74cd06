"""A language model's prompt: the first tokens of every output are forced to be the line's.

T2T decodes a model without inputs by forcing its partial targets
(``tensor2tensor/models/transformer.py``, ``Transformer._fast_decode``,
``symbols_to_logits_fn``): while step ``i`` is within the prompt, the step's logits are
replaced by ``one_hot(prompt[:, i], V, 0, -1e9)``, so the prompt's tokens are chosen and each
adds a log-probability of exactly 0 to the score; the outputs then start after the prompt.
Here the forcing is a ``SearchConstraint`` (``decoding/constraints.py``) that the line decoder
hands the searches, which stay task-free: the same log-probabilities, in greedy search,
sampling and beam search alike.

One difference from T2T, in what is forced: T2T pads a batch's prompts with 0 and forces the
padding too (a shorter prompt is followed by PAD tokens), and its beam search tiles the prompts
across beams in another order than its beams (``tf.tile``), which pairs a beam with another
line's prompt once a batch holds more than one line. Here each row is forced to its own prompt
and its own length, which is what T2T computes for a batch of one line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.decoding.constraints import SearchConstraint

FORCED_OFF = -1e9  # T2T's off value of the forced one-hot logits


class PromptConstraint(SearchConstraint):
    """Forces step ``i`` to ``prompt[row, i]`` while ``i`` is below the row's prompt length."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size

    def batch_inputs(
        self, rows: Sequence[Sequence[int]], lines: Sequence[str] | None, length: int
    ) -> tuple[np.ndarray, ...]:
        """The prompts padded to ``length`` [B, L] and their lengths [B]."""
        prompts = np.zeros([len(rows), length], np.int32)
        for row, ids in enumerate(rows):
            prompts[row, : len(ids)] = ids
        return prompts, np.asarray([len(ids) for ids in rows], np.int32)

    def initial_state(self, prompts: tf.Tensor, lengths: tf.Tensor) -> dict:
        # One more column, never forced: a batch of blank prompts has none of its own.
        prompts = tf.pad(tf.convert_to_tensor(prompts, tf.int32), [[0, 0], [0, 1]])
        return {"prompt": prompts, "length": tf.convert_to_tensor(lengths, tf.int32)}

    def allowed_next(self, ids, i, state: dict, decode_length) -> tuple:
        prompt = state["prompt"]
        token = tf.gather(prompt, tf.minimum(i, tf.shape(prompt)[1] - 1), axis=1)
        forced = i < state["length"]
        chosen = tf.equal(tf.range(self.vocab_size)[None, :], token[:, None])
        return tf.logical_or(chosen, tf.logical_not(forced)[:, None]), state

    def mask(self, log_probs: tf.Tensor, allowed: tf.Tensor) -> tf.Tensor:
        """A forced row (one token allowed) gets T2T's log-softmax of its forced logits (0 for
        the prompt's token, -1e9 for the others); the other rows keep the model's."""
        free = tf.reduce_all(allowed, axis=-1, keepdims=True)
        forced = tf.where(
            allowed, tf.zeros_like(log_probs), tf.fill(tf.shape(log_probs), FORCED_OFF)
        )
        return tf.where(free, log_probs, forced)


def continuation(ids: Sequence[int], prompt_length: int) -> list[int]:
    """An output's ids after its prompt (T2T: ``outputs[:, partial_targets_length:]``)."""
    return list(ids[prompt_length:])
