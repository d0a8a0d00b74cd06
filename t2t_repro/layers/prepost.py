"""T2T's layer pre/post-processing sequences around every sublayer (digest §2.8).

A sequence is a string of steps applied left to right: ``n`` LayerNorm (eps 1e-6), ``d``
dropout, ``a`` add the residual (the sublayer's input; postprocess only); ``none`` is
empty. The paper is preprocess ``none`` / postprocess ``dan``: LN(x + Dropout(f(x))); T2T v2+
is ``n`` / ``da``: x + Dropout(f(LN(x))), with a final LN on each stack.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.layers.dropout import Dropout


def parse_sequence(sequence: str, allow_add: bool) -> str:
    steps = "" if sequence in ("", "none") else sequence
    allowed = "nda" if allow_add else "nd"
    bad = [s for s in steps if s not in allowed]
    if bad:
        raise ValueError(
            f"Unsupported step(s) {bad} in layer sequence {sequence!r}; allowed: {allowed!r}"
            " (n = layer norm, d = dropout, a = add residual, 'none' = nothing).")
    return steps


def layer_norm(name: str, epsilon: float) -> keras.layers.LayerNormalization:
    return keras.layers.LayerNormalization(epsilon=epsilon, name=name)


class Sequence(keras.layers.Layer):
    """Applies one pre/post-processing sequence; ``residual`` is used by an ``a`` step."""

    def __init__(self, sequence: str, dropout: float, epsilon: float = 1e-6,
                 allow_add: bool = True, **kwargs) -> None:
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
        self.dropout = Dropout(dropout)

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

    def call(self, x: tf.Tensor, residual: tf.Tensor | None = None,
             training: bool = False) -> tf.Tensor:
        norms = iter(self.norms)
        for step in self.steps:
            if step == "a":
                x = x + residual
            elif step == "n":
                x = next(norms)(x)
            else:
                x = self.dropout(x, training=training)
        return x

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(sequence=self.sequence, dropout=self.dropout_rate,
                      epsilon=self.epsilon, allow_add=self.allow_add)
        return config


class Residual(keras.layers.Layer):
    """Wraps a sublayer: ``post(x, sublayer(pre(x), ...))`` (T2T's prepost wrapper)."""

    def __init__(self, sublayer: keras.layers.Layer, preprocess: str = "none",
                 postprocess: str = "dan", dropout: float = 0.1, epsilon: float = 1e-6,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.sublayer = sublayer
        self.pre = Sequence(preprocess, dropout, epsilon, allow_add=False, name="pre")
        self.post = Sequence(postprocess, dropout, epsilon, allow_add=True, name="post")

    def build(self, x_shape, memory_shape=None) -> None:
        self.pre.build(x_shape)
        self.post.build(x_shape)
        if hasattr(self.sublayer, "compute_kv"):
            self.sublayer.build(x_shape, memory_shape or x_shape)
        else:
            self.sublayer.build(x_shape)
        self.built = True

    def call(self, x: tf.Tensor, memory: tf.Tensor | None = None, bias: tf.Tensor | None = None,
             training: bool = False, return_weights: bool = False, pad_remover=None):
        """Attention sublayers take ``memory``/``bias``; the FFN ``x`` (and a pad remover)."""
        y = self.pre(x, training=training)
        if hasattr(self.sublayer, "compute_kv"):
            y = self.sublayer(y, memory, bias=bias, training=training,
                              return_weights=return_weights)
        elif pad_remover is not None:
            y = self.sublayer(y, training=training, pad_remover=pad_remover)
        else:
            y = self.sublayer(y, training=training)
        weights = None
        if return_weights and isinstance(y, tuple):
            y, weights = y
        out = self.post(y, residual=x, training=training)
        return (out, weights) if return_weights else out
