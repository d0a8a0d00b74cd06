"""The attention biases of the transformer's three attentions, as T2T builds them.

T2T's ``transformer_prepare_encoder`` (``layers/transformer_layers.py``),
``transformer_prepare_decoder`` and ``fast_decode`` (``models/transformer.py``) choose each
bias from a few hparams, and one place here does the same:

* the encoder: padding masked (``attention_bias_ignore_padding``); with
  ``unidirectional_encoder`` the lower triangle instead, each position seeing only itself and
  those before it (padding is at the end, so no real position sees it);
* the decoder: the lower triangle; with ``causal_decoder_self_attention=False`` every
  position's targets instead, padding masked (T2T's full attention, for models that decode
  otherwise: its ``fast_decode`` stays causal, and so do the searches here);
* ``proximity_bias``: ``-log(1 + |i - j|)`` added to the self-attentions
  (``attention_bias_proximal``), also at each cached decoding step;
* a packed batch (``models/packing.py``): attention within each example's segment.

The encoder's real tokens (its pad remover's) are said apart from the bias, which need not say
them (a causal or packed encoder), as T2T passes ``nonpadding`` or ``attn_bias_for_padding``.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from t2t_repro.layers.attention import attention_bias_ignore_padding, attention_bias_lower_triangle
from t2t_repro.models.packing import Packing


@dataclasses.dataclass(frozen=True)
class BiasKinds:
    """The hparams that choose the biases (T2T's names); T2T's defaults give the plain ones."""

    proximity_bias: bool = False
    unidirectional_encoder: bool = False
    causal_decoder_self_attention: bool = True

    @classmethod
    def of(cls, hp) -> BiasKinds:
        return cls(
            bool(hp.get("proximity_bias", False)),
            bool(hp.get("unidirectional_encoder", False)),
            bool(hp.get("causal_decoder_self_attention", True)),
        )


def attention_bias_proximal(length) -> tf.Tensor:
    """[1, 1, L, L]: ``-log1p(|i - j|)``, T2T's ``attention_bias_proximal``."""
    r = tf.cast(tf.range(length), tf.float32)
    return -tf.math.log1p(tf.abs(r[None, :] - r[:, None]))[None, None]


def encoder_biases(
    inputs: tf.Tensor, kinds: BiasKinds, packing: Packing | None
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(encoder self-attention bias, encoder-decoder bias, the real tokens [B, Ls] of its pad
    remover: T2T's nonpadding, said apart from a bias that need not say it) for ``inputs``."""
    if packing is not None and packing.input_segment is not None:
        self_bias, bias = packing.encoder_biases()
        keep = packing.input_nonpadding()
    else:
        self_bias = bias = attention_bias_ignore_padding(inputs)
        keep = tf.not_equal(inputs, 0)
    if kinds.unidirectional_encoder:
        self_bias = attention_bias_lower_triangle(tf.shape(inputs)[1])
    if kinds.proximity_bias:
        self_bias = self_bias + attention_bias_proximal(tf.shape(inputs)[1])
    return self_bias, bias, keep


def decoder_self_bias(targets: tf.Tensor, kinds: BiasKinds, packing: Packing | None) -> tf.Tensor:
    """The teacher-forced decoder's self-attention bias for ``targets`` [B, Lt]."""
    if kinds.causal_decoder_self_attention:
        bias = attention_bias_lower_triangle(tf.shape(targets)[1])
    else:  # T2T: padding of the targets' embeddings, i.e. their PAD ids
        bias = attention_bias_ignore_padding(targets)
    if packing is not None:
        bias = bias + packing.decoder_self_bias()
    if kinds.proximity_bias:
        bias = bias + attention_bias_proximal(tf.shape(targets)[1])
    return bias


def decode_step_bias(index, length, kinds: BiasKinds) -> tf.Tensor | None:
    """[1, 1, 1, L]: what a cached decoding step at ``index`` adds to its self-attention
    beyond the unwritten slots' mask (row ``index`` of T2T's ``fast_decode`` bias), or None."""
    if not kinds.proximity_bias:
        return None
    r = tf.cast(tf.range(length), tf.float32)
    distance = tf.abs(r - tf.cast(index, tf.float32))
    return -tf.math.log1p(distance)[None, None, None, :]
