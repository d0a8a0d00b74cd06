"""Decoder input features from the target's word slots: the slot signal and the source feed.

Not T2T. For targets that fill the input's words one slot each, in order (the POS tags of a
linearised parse tree, ``slot_signal``), the decoder input at position i also gets the
positional signal at the number of slots among the targets before i: which input word comes
next, which the decoder otherwise has to count. With ``source_feed`` it also gets the
encoder's output at that word (0 past the input or on padding): the word it is about to fill,
in context. No weights: the signal is the model's positional signal of the inputs (passed in,
so a learned one is the encoder's table), and the feed reads the encoder's output.

``full_pass`` serves the teacher-forced decoder, ``step`` the cached decoding step; they give
the same features for the same prefix. Both add to the decoder input in place of the model,
in the same order as its own additions (signal, then feed, each cast to the input's dtype).
"""

from __future__ import annotations

import keras
import tensorflow as tf


class SlotFeatures(keras.layers.Layer):
    """Target ids in ``[first_slot_id, end_slot_id)`` are slots."""

    def __init__(
        self, first_slot_id: int, end_slot_id: int, source_feed: bool = False, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        if not 0 < first_slot_id < end_slot_id:
            raise ValueError(f"slot ids [{first_slot_id}, {end_slot_id}) are not 0 < first < end")
        self.first_slot_id = int(first_slot_id)
        self.end_slot_id = int(end_slot_id)
        self.source_feed = bool(source_feed)

    def build(self, input_shape=None) -> None:
        self.built = True  # no weights

    # Cache entries a decoding step reads besides the decoder layers' (``step``).
    @property
    def cache_keys(self) -> tuple[str, ...]:
        return ("encoder_output",) if self.source_feed else ()

    def full_pass(self, y, targets, encoder_output, encoder_bias, positional) -> tf.Tensor:
        """``y`` [B, Lt, d] (the shifted target embeddings) plus the features of ``targets``
        [B, Lt]: position i counts the slots among ``targets[:, :i]``."""
        slots = tf.cumsum(self._is_slot(targets), axis=1, exclusive=True)
        return self._add(y, slots, encoder_output, encoder_bias, positional)

    def step(self, x, ids, i, encoder_output, encoder_bias, positional) -> tf.Tensor:
        """``x`` [N, 1, d] (the input at position i) plus its features: the slots among
        ``ids[:, 1 : i + 1]`` (column 0 is GO)."""
        filled = tf.range(tf.shape(ids)[1]) <= i
        slots = tf.reduce_sum(self._is_slot(ids) * tf.cast(filled, tf.int32), axis=1)
        return self._add(x, slots[:, None], encoder_output, encoder_bias, positional)

    def call(self, y, targets, encoder_output, encoder_bias, positional) -> tf.Tensor:
        return self.full_pass(y, targets, encoder_output, encoder_bias, positional)

    def _is_slot(self, ids: tf.Tensor) -> tf.Tensor:
        return tf.cast((ids >= self.first_slot_id) & (ids < self.end_slot_id), tf.int32)

    def _add(self, y, slots, encoder_output, encoder_bias, positional) -> tf.Tensor:
        flat = tf.cast(tf.reshape(slots, [-1]), tf.float32)
        signal = positional.signal_at(flat)
        signal = tf.reshape(signal, tf.concat([tf.shape(slots), [signal.shape[-1]]], 0))
        y = y + tf.cast(signal, y.dtype)
        if self.source_feed:
            y = y + tf.cast(source_at(slots, encoder_output, encoder_bias), y.dtype)
        return y

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            first_slot_id=self.first_slot_id,
            end_slot_id=self.end_slot_id,
            source_feed=self.source_feed,
        )
        return config


def source_at(slots: tf.Tensor, encoder_output: tf.Tensor, encoder_bias: tf.Tensor) -> tf.Tensor:
    """[B, L] slot counts -> [B, L, d]: the encoder's output at input position ``slots`` (past
    the last position, the last position), 0 where that position is padding."""
    last = tf.shape(encoder_output)[1] - 1
    index = tf.minimum(tf.cast(slots, tf.int32), last)
    real = tf.cast(encoder_bias[:, 0, 0, :] > -1.0, encoder_output.dtype)  # [B, Ls]
    feed = tf.gather(encoder_output, index, batch_dims=1)
    return feed * tf.gather(real, index, batch_dims=1)[..., None]
