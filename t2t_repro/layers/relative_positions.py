"""Relative position representations in self-attention (Shaw et al. 2018), as T2T computes them
(``tensor2tensor/layers/common_attention.py``, ``dot_product_attention_relative``).

Each head learns two tables of ``2 * max_relative_position + 1`` rows of its depth: one for keys
and one for values. A query at position i and a key at position j use row
``clip(j - i, -max, max) + max`` of each: the key row is dotted with the (scaled) query and added
to the attention logit, the value row is summed with the attention weights (after dropout) and
added to the output. Distances beyond ``max_relative_position`` share the edge rows.

T2T's ``_generate_relative_positions_matrix`` places the queries at the last positions of the
keys; in its cached decoding the one query is the newest key (``cache=True``). Here the decoder's
cache is a fixed-size buffer, so a decoding step names the query's position instead; the keys
after it are masked, so the rows they would use never matter.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.layers.initializers import GLOROT_UNIFORM


def relative_positions_matrix(length_q, length_k, max_relative_position: int, query_position=None):
    """[Lq, Lk] table rows: ``clip(j - i, -max, max) + max`` for key j and query i.

    Queries are the last ``length_q`` key positions (T2T's full pass, where Lq == Lk), or, with
    ``query_position`` (a decoding step, Lq == 1), that one position.
    """
    keys = tf.range(length_k)
    if query_position is None:
        queries = tf.range(length_k - length_q, length_k)
    else:
        queries = tf.reshape(tf.cast(query_position, tf.int32), [1])
    distance = keys[None, :] - queries[:, None]
    clipped = tf.clip_by_value(distance, -max_relative_position, max_relative_position)
    return clipped + max_relative_position


@keras.saving.register_keras_serializable(package="t2t_repro")
class RelativePositions(keras.layers.Layer):
    """The key and value tables of one attention layer (T2T's variable scope
    ``dot_product_attention_relative/relative_positions_{keys,values}/embeddings``) and the two
    products that use them (T2T's ``_relative_attention_inner``)."""

    def __init__(
        self,
        max_relative_position: int,
        depth: int,
        initializer: str | dict = GLOROT_UNIFORM,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if max_relative_position <= 0:
            raise ValueError(
                f"max_relative_position ({max_relative_position}) must be > 0 for relative "
                "self-attention."
            )
        self.max_relative_position = max_relative_position
        self.depth = depth
        self.initializer = initializer

    def build(self, input_shape=None) -> None:
        rows = 2 * self.max_relative_position + 1
        # T2T's tf.get_variable under its default initializer (layers/initializers.py).
        self.keys_table = self.add_weight(
            name="relative_positions_keys", shape=(rows, self.depth), initializer=self.initializer
        )
        self.values_table = self.add_weight(
            name="relative_positions_values",
            shape=(rows, self.depth),
            initializer=self.initializer,
        )
        self.built = True

    def positions(self, length_q, length_k, query_position=None) -> tf.Tensor:
        """The [Lq, Lk] rows (``relative_positions_matrix``) for this layer's clipping."""
        return relative_positions_matrix(
            length_q, length_k, self.max_relative_position, query_position
        )

    def key_logits(self, q: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
        """q [B, h, Lq, d] . keys table at ``positions`` [Lq, Lk] -> [B, h, Lq, Lk]."""
        if not self.built:
            self.build()
        table = tf.gather(tf.cast(self.keys_table, q.dtype), positions)
        return tf.einsum("bhqd,qkd->bhqk", q, table)

    def weighted_values(self, weights: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
        """weights [B, h, Lq, Lk] summed over the values table at ``positions`` -> [B, h, Lq, d]."""
        if not self.built:
            self.build()
        table = tf.gather(tf.cast(self.values_table, weights.dtype), positions)
        return tf.einsum("bhqk,qkd->bhqd", weights, table)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(max_relative_position=self.max_relative_position, depth=self.depth)
        if self.initializer != GLOROT_UNIFORM:
            config.update(initializer=self.initializer)
        return config
