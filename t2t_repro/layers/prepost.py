"""T2T's layer pre/post-processing sequences around every sublayer
(``tensor2tensor/layers/common_layers.py``, ``layer_prepostprocess``).

A sequence is a string of steps applied left to right: ``n`` LayerNorm (eps 1e-6), ``d``
dropout, ``a`` add the residual (the sublayer's input; postprocess only); ``none`` is
empty. The paper is preprocess ``none`` / postprocess ``dan``: LN(x + Dropout(f(x))); T2T v2+
is ``n`` / ``da``: x + Dropout(f(LN(x))), with a final LN on each stack.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.layers.dropout import Dropout
from t2t_repro.layers.layer_norm import LayerNorm


def parse_sequence(sequence: str, allow_add: bool) -> str:
    steps = "" if sequence in ("", "none") else sequence
    allowed = "nda" if allow_add else "nd"
    bad = [s for s in steps if s not in allowed]
    if bad:
        raise ValueError(
            f"Unsupported step(s) {bad} in layer sequence {sequence!r}; allowed: {allowed!r}"
            " (n = layer norm, d = dropout, a = add residual, 'none' = nothing)."
        )
    return steps


def layer_norm(name: str, epsilon: float) -> LayerNorm:
    return LayerNorm(epsilon=epsilon, name=name)


@keras.saving.register_keras_serializable(package="t2t_repro")
class LayerPrePostProcess(keras.layers.Layer):
    """Applies one pre/post-processing sequence; ``residual`` is used by an ``a`` step.

    T2T's ``common_layers.layer_prepostprocess``.
    """

    def __init__(
        self,
        sequence: str,
        dropout: float,
        epsilon: float = 1e-6,
        allow_add: bool = True,
        dropout_broadcast_dims: tuple[int, ...] = (),
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.sequence = sequence
        self.dropout_rate = dropout
        self.epsilon = epsilon
        self.allow_add = allow_add
        self.steps = parse_sequence(sequence, allow_add)
        # Attributes rather than a list, so that checkpoints track them.
        self.norm_names = [f"layer_norm_{i}" for i, s in enumerate(self.steps) if s == "n"]
        for name in self.norm_names:
            setattr(self, name, layer_norm(name, epsilon))
        # T2T's layer_prepostprocess_dropout_broadcast_dims (the 'd' step).
        self.dropout_broadcast_dims = tuple(dropout_broadcast_dims)
        self.dropout = Dropout(dropout, self.dropout_broadcast_dims)

    @property
    def norms(self) -> list:
        return [getattr(self, name) for name in self.norm_names]

    def build(self, input_shape) -> None:
        for norm in self.norms:
            norm.build(input_shape)
        self.built = True

    @property
    def is_identity(self) -> bool:
        return not self.steps

    def call(
        self,
        x: tf.Tensor,
        residual: tf.Tensor | None = None,
        training: bool = False,
        rows=None,
    ) -> tf.Tensor:
        """``rows``: ``x`` holds the kept rows of a ``PadRemover`` (dropout draws the full
        shape's mask, ``layers.dropout.Dropout``)."""
        norms = iter(self.norms)
        for step in self.steps:
            if step == "a":
                x = x + residual
            elif step == "n":
                x = next(norms)(x)
            else:
                x = self.dropout(x, training=training, rows=rows)
        return x

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            sequence=self.sequence,
            dropout=self.dropout_rate,
            epsilon=self.epsilon,
            allow_add=self.allow_add,
        )
        if self.dropout_broadcast_dims:
            config.update(dropout_broadcast_dims=list(self.dropout_broadcast_dims))
        return config


@keras.saving.register_keras_serializable(package="t2t_repro")
class Residual(keras.layers.Layer):
    """Wraps a sublayer ``f`` of ``x`` alone (the FFN): ``post(f(pre(x)), residual=x)``.

    T2T's ``layer_preprocess`` / ``layer_postprocess`` around each sublayer
    (``tensor2tensor/models/transformer.py, transformer_encoder``).
    """

    def __init__(
        self,
        sublayer: keras.layers.Layer,
        preprocess: str = "none",
        postprocess: str = "dan",
        dropout: float = 0.1,
        epsilon: float = 1e-6,
        dropout_broadcast_dims: tuple[int, ...] = (),
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.preprocess = preprocess
        self.postprocess = postprocess
        self.dropout_rate = dropout
        self.epsilon = epsilon
        self.dropout_broadcast_dims = dims = tuple(dropout_broadcast_dims)
        self.sublayer = sublayer
        self.pre = LayerPrePostProcess(preprocess, dropout, epsilon, False, dims, name="pre")
        self.post = LayerPrePostProcess(postprocess, dropout, epsilon, True, dims, name="post")

    def build(self, x_shape, *sublayer_shapes) -> None:
        """``sublayer_shapes``: the sublayer's other input shapes (an attention's memory)."""
        self.pre.build(x_shape)
        self.post.build(x_shape)
        self.sublayer.build(x_shape, *sublayer_shapes)
        self.built = True

    def call(self, x: tf.Tensor, training: bool = False, pad_remover=None, rows=None) -> tf.Tensor:
        """``pad_remover``: passed on to an FFN sublayer (``layers/pad_remover.py``);
        ``rows``: ``x`` holds that remover's kept rows (see ``LayerPrePostProcess``)."""
        y = self.pre(x, training=training, rows=rows)
        if pad_remover is not None:
            y = self.sublayer(y, training=training, pad_remover=pad_remover)
        elif rows is not None:
            y = self.sublayer(y, training=training, rows=rows)
        else:
            y = self.sublayer(y, training=training)
        return self.post(y, residual=x, training=training, rows=rows)

    def get_config(self) -> dict:
        config = super().get_config()
        sublayer = keras.saving.serialize_keras_object(self.sublayer)
        sublayer.pop("build_config", None)  # ``build`` builds it, with the memory's shape too.
        config.update(
            sublayer=sublayer,
            preprocess=self.preprocess,
            postprocess=self.postprocess,
            dropout=self.dropout_rate,
            epsilon=self.epsilon,
        )
        if self.dropout_broadcast_dims:
            config.update(dropout_broadcast_dims=list(self.dropout_broadcast_dims))
        return config

    @classmethod
    def from_config(cls, config: dict) -> Residual:
        config = dict(config, sublayer=keras.saving.deserialize_keras_object(config["sublayer"]))
        return cls(**config)


@keras.saving.register_keras_serializable(package="t2t_repro")
class AttentionResidual(Residual):
    """``Residual`` around ``MultiHeadAttention``, with the attention's call signature.

    Returns what the attention returns, its output post-processed: the output alone, or
    ``(output, weights)`` with ``return_weights``, or ``(output, cache)`` with a cache.
    """

    def call(
        self,
        x: tf.Tensor,
        memory: tf.Tensor | None = None,
        bias: tf.Tensor | None = None,
        cache: tuple[tf.Tensor, tf.Tensor] | None = None,
        cache_update_index=None,
        training: bool = False,
        return_weights: bool = False,
        rows=None,
        memory_rows=None,
    ):
        """``rows`` / ``memory_rows``: ``x`` / ``memory`` hold kept rows (``Residual``)."""
        y = self.sublayer(
            self.pre(x, training=training, rows=rows),
            memory,
            bias=bias,
            cache=cache,
            cache_update_index=cache_update_index,
            training=training,
            return_weights=return_weights,
            rows=rows,
            memory_rows=memory_rows,
        )
        if cache is None and not return_weights:
            return self.post(y, residual=x, training=training, rows=rows)
        y, extra = y
        return self.post(y, residual=x, training=training), extra
