"""The position-wise feed-forward network: max(0, xW1 + b1)W2 + b2 (T2T ``dense_relu_dense``).

T2T names the two projections ``conv1``/``conv2`` and drops out the ReLU activations at
``relu_dropout`` (0 in the paper's sets, 0.1 from T2T v2 on).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.layers.dropout import Dropout
from t2t_repro.layers.initializers import GLOROT_UNIFORM


@keras.saving.register_keras_serializable(package="t2t_repro")
class DenseReluDense(keras.layers.Layer):
    def __init__(
        self,
        filter_size: int,
        output_size: int,
        relu_dropout: float = 0.0,
        dropout_broadcast_dims: tuple[int, ...] = (),
        kernel_initializer: str | dict = GLOROT_UNIFORM,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.filter_size = filter_size
        self.output_size = output_size
        self.relu_dropout = relu_dropout
        # T2T's default variable initializer (layers/initializers.py); the biases start at 0.
        self.kernel_initializer = kernel_initializer
        self.conv1 = keras.layers.Dense(
            filter_size, activation="relu", name="conv1", kernel_initializer=kernel_initializer
        )
        self.conv2 = keras.layers.Dense(
            output_size, name="conv2", kernel_initializer=kernel_initializer
        )
        # T2T's relu_dropout_broadcast_dims (common_layers.dense_relu_dense).
        self.dropout_broadcast_dims = tuple(dropout_broadcast_dims)
        self.dropout = Dropout(relu_dropout, self.dropout_broadcast_dims)

    def build(self, input_shape) -> None:
        self.conv1.build(input_shape)
        self.conv2.build(tuple(input_shape[:-1]) + (self.filter_size,))
        self.built = True

    def call(self, x: tf.Tensor, training: bool = False, pad_remover=None, rows=None) -> tf.Tensor:
        """``pad_remover`` (``layers.pad_remover.PadRemover``): run on real tokens only;
        ``rows``: ``x`` is already that remover's kept rows (for the dropout's mask)."""
        if pad_remover is None:
            return self.conv2(self.dropout(self.conv1(x), training=training, rows=rows))
        rows = pad_remover.remove(x)
        gathered = pad_remover if pad_remover.gather else None
        y = self.conv2(self.dropout(self.conv1(rows), training=training, rows=gathered))
        return pad_remover.restore(y, x)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            filter_size=self.filter_size,
            output_size=self.output_size,
            relu_dropout=self.relu_dropout,
        )
        if self.dropout_broadcast_dims:
            config.update(dropout_broadcast_dims=list(self.dropout_broadcast_dims))
        if self.kernel_initializer != GLOROT_UNIFORM:
            config.update(kernel_initializer=self.kernel_initializer)
        return config
