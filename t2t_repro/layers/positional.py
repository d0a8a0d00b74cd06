"""Positional signals: T2T's timing signal, the paper's formula, and learned positions.

T2T's ``get_timing_signal_1d`` concatenates [sin | cos] and spaces timescales by
``10000^(-i/(n-1))`` with n = d/2; the paper interleaves sin/cos with ``10000^(-2i/d)``.
The two differ slightly (``tensor2tensor/layers/common_attention.py``,
``get_timing_signal_1d``), so both are here: "timing" (T2T, default, needed to
match T2T numbers and checkpoints) and "timing_paper". "emb" is T2T's learned positions
(``add_positional_embedding``; the paper's Table 3 row E): a table of ``max_positions`` rows
(T2T's ``hparams.max_length``) under T2T's default variable initializer, and no signal (zeros)
past its last row. "none" adds nothing: T2T's ``pos = None`` (``transformer_relative``, whose
attention knows positions).
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

from t2t_repro.layers.initializers import GLOROT_UNIFORM

MODES = ("timing", "timing_paper", "emb", "none")


def timing_signal(
    positions: tf.Tensor, channels: int, min_timescale: float = 1.0, max_timescale: float = 1.0e4
) -> tf.Tensor:
    """T2T's signal for float ``positions`` [L] -> [L, channels] (concatenated sin|cos)."""
    num_timescales = channels // 2
    log_increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = tf.exp(tf.range(num_timescales, dtype=tf.float32) * -log_increment)
    if min_timescale != 1.0:  # (a product with 1.0 is exact: no op for T2T's default)
        inv_timescales = min_timescale * inv_timescales
    scaled = tf.expand_dims(positions, 1) * tf.expand_dims(inv_timescales, 0)
    signal = tf.concat([tf.sin(scaled), tf.cos(scaled)], axis=1)
    if channels % 2:  # T2T pads an odd width with a zero channel
        signal = tf.pad(signal, [[0, 0], [0, 1]])
    return signal


def paper_signal(positions: tf.Tensor, channels: int) -> tf.Tensor:
    """The paper's PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...), interleaved."""
    dims = tf.range(channels, dtype=tf.float32)
    exponent = 2.0 * tf.floor(dims / 2.0) / float(channels)
    angles = positions[:, None] / tf.pow(10000.0, exponent)[None, :]
    is_even = tf.equal(tf.math.floormod(tf.range(channels), 2), 0)
    return tf.where(is_even[None, :], tf.sin(angles), tf.cos(angles))


@keras.saving.register_keras_serializable(package="t2t_repro")
class PositionalSignal(keras.layers.Layer):
    """Adds a positional signal to ``x`` [B, L, d] for positions start, start+1, ..."""

    def __init__(
        self,
        mode: str = "timing",
        hidden_size: int = 512,
        max_positions: int = 256,
        initializer: str | dict = GLOROT_UNIFORM,
        **kwargs,
    ) -> None:
        """``max_positions`` and ``initializer``: the "emb" table's rows and initializer."""
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError(f"Unknown positional mode {mode!r}; choose one of {MODES}.")
        self.mode = mode
        self.hidden_size = hidden_size
        self.max_positions = max_positions
        self.initializer = initializer

    def build(self, input_shape=None) -> None:
        if self.mode == "emb":
            self.position_embeddings = self.add_weight(
                name="position_embedding",
                shape=(self.max_positions, self.hidden_size),
                initializer=self.initializer,
            )
        self.built = True

    def _table_rows(self, positions: tf.Tensor) -> tf.Tensor:
        """The "emb" table's rows at int32 ``positions``, zeros past its end (T2T pads the
        table with zeros to the input's length)."""
        table = tf.convert_to_tensor(self.position_embeddings)  # (as read: autocast or not)
        table = tf.concat([table, tf.zeros([1, self.hidden_size], table.dtype)], 0)
        return tf.gather(table, tf.minimum(positions, self.max_positions))

    def signal(self, start, length) -> tf.Tensor:
        """[length, d] signal for positions start .. start+length-1."""
        if self.mode == "emb":
            return self._table_rows(tf.range(length) + start)
        if self.mode == "none":
            return tf.zeros([length, self.hidden_size])
        positions = tf.range(length)
        if not (isinstance(start, int) and start == 0):  # (no op to add a Python 0)
            positions += start
        positions = tf.cast(positions, tf.float32)
        if self.mode == "timing":
            return timing_signal(positions, self.hidden_size)
        return paper_signal(positions, self.hidden_size)

    def signal_at(self, positions: tf.Tensor) -> tf.Tensor:
        """[N, d] signal for float ``positions`` [N] (any order)."""
        if self.mode == "emb":
            return self._table_rows(tf.cast(positions, tf.int32))
        if self.mode == "none":
            return tf.zeros([tf.shape(positions)[0], self.hidden_size])
        if self.mode == "timing":
            return timing_signal(positions, self.hidden_size)
        return paper_signal(positions, self.hidden_size)

    def call(self, x: tf.Tensor, start=0, positions: tf.Tensor | None = None) -> tf.Tensor:
        """``positions`` [B, L]: each token's position in its own example (a packed batch's
        ``inputs_position``/``targets_position``: T2T's ``add_timing_signal_1d_given_position``
        and ``add_positional_embedding`` with positions, ``layers/common_attention.py``)."""
        if self.mode == "none":
            return x
        if positions is not None:
            flat = tf.reshape(positions, [-1])
            signal = self.signal_at(flat if self.mode == "emb" else tf.cast(flat, tf.float32))
            return x + tf.cast(tf.reshape(signal, tf.shape(x)), x.dtype)
        return x + tf.cast(tf.expand_dims(self.signal(start, tf.shape(x)[1]), 0), x.dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            mode=self.mode, hidden_size=self.hidden_size, max_positions=self.max_positions
        )
        if self.initializer != GLOROT_UNIFORM:
            config.update(initializer=self.initializer)
        return config
