"""T2T's symbol modality: a [V, d] embedding that is also the output projection.

Why one layer does both: the paper (and T2T's ``shared_embedding_and_softmax_weights``)
ties the source embedding, target embedding and pre-softmax projection to one matrix.
Embedding rows are scaled by sqrt(d) and the PAD id 0 embeds to an exact zero vector, which
is how T2T detects padding; logits are ``h @ E^T`` with no scaling and no bias
(``tensor2tensor/layers/modalities.py``, ``symbol_bottom`` / ``symbol_top``).
"""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="t2t_repro")
class SymbolEmbedding(keras.layers.Layer):
    """Embeds ids (scaled by sqrt(d), PAD -> 0) and projects hidden states to logits."""

    def __init__(
        self, vocab_size: int, hidden_size: int, multiply_by_sqrt_depth: bool = True, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.multiply_by_sqrt_depth = multiply_by_sqrt_depth

    def build(self, input_shape=None) -> None:
        self.embeddings = self.add_weight(
            name="weights",
            shape=(self.vocab_size, self.hidden_size),
            initializer=keras.initializers.RandomNormal(stddev=self.hidden_size**-0.5),
        )
        # T2T holds this matrix in symbol_modality_num_shards row blocks, which optimizers
        # that are not elementwise treat as variables of their own (optimizers/adafactor.py).
        self.embeddings.t2t_row_sharded = True
        self.built = True

    def call(self, ids: tf.Tensor) -> tf.Tensor:
        if not self.built:
            self.build()
        table = tf.cast(self.embeddings, self.compute_dtype)
        x = tf.gather(table, ids)
        if self.multiply_by_sqrt_depth:
            x = x * tf.cast(self.hidden_size**0.5, x.dtype)
        return x * tf.expand_dims(tf.cast(tf.not_equal(ids, 0), x.dtype), -1)

    def logits(self, hidden: tf.Tensor) -> tf.Tensor:
        """``hidden @ E^T``: [..., d] -> [..., V] (the softmax top).

        One 2-D matmul over all positions: a batched matmul against the shared table would
        make the table's gradient a [B, V, d] batch summed over B (2 GB for base at B=32).
        """
        if not self.built:
            self.build()
        with tf.name_scope("logits"):  # Names the kernels in a profile.
            table = tf.cast(self.embeddings, hidden.dtype)
            already_flat = hidden.shape.rank == 2  # a search step's [N, d]
            flat = hidden if already_flat else tf.reshape(hidden, [-1, self.hidden_size])
            if flat.dtype == tf.float32:
                logits = _project_fp32(flat, table)
            else:
                logits = tf.matmul(flat, table, transpose_b=True)
            if already_flat:
                return logits
            return tf.reshape(logits, tf.concat([tf.shape(hidden)[:-1], [self.vocab_size]], 0))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.hidden_size,)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            multiply_by_sqrt_depth=self.multiply_by_sqrt_depth,
        )
        return config


@tf.custom_gradient
def _project_fp32(flat: tf.Tensor, table: tf.Tensor):
    """``flat @ table^T`` [N, V] whose table gradient is computed as [d, V] and transposed.

    Why: oneDNN's float32 product ``grad^T @ flat`` (the [V, d] layout TensorFlow's MatMul
    gradient asks for) ran at ~94 GFLOP/s on AMD EPYC, ``flat^T @ grad`` at ~105: about 0.8%
    of a small model's training step, 0.5% of transformer_base's. The forward product and the
    gradient reaching ``flat`` are TensorFlow's own; the table's gradient is the same sum in
    another order (equal to float32 rounding).
    """
    logits = tf.matmul(flat, table, transpose_b=True)

    def grad(upstream):
        table_grad = tf.transpose(tf.matmul(flat, upstream, transpose_a=True))
        return tf.matmul(upstream, table), table_grad

    return logits, grad
