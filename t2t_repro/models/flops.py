"""Analytic matmul FLOPs of the Transformer, for model-FLOPs utilisation (MFU).

Counts 2*m*n*k for every matrix product on padded shapes: Q/K/V/O projections, the two
attention products (QK^T and AV; relative self-attention has two more of their size, the
queries times the key table rows and the weights times the value table rows), the FFN, and the
tied softmax projection (a language model, ``has_input`` false: no encoder and no
encoder-decoder attention; a classifier: no decoder, one class projection an example).
Element-wise
work (softmax, LayerNorm, dropout, the loss) is not counted, as is usual for MFU. A training
step is 3x the forward pass (backward = 2x forward).
"""

from __future__ import annotations

from t2t_repro.hparams_lib.sizes import attention_channels, layer_counts, logits_width


def _attention(d, key, value, q_tokens, kv_tokens, pairs, relative=False) -> float:
    """Projections for q_tokens queries over kv_tokens keys, plus QK^T and AV on pairs (twice
    with ``relative`` positions)."""
    projections = 2 * q_tokens * d * key + 2 * kv_tokens * d * (key + value)
    projections += 2 * q_tokens * value * d
    return projections + (2 * pairs * key + 2 * pairs * value) * (2 if relative else 1)


def forward_flops(hparams, batch_size: int, input_length: int, target_length: int) -> float:
    d, ff = hparams.hidden_size, hparams.filter_size
    key, value = attention_channels(hparams)
    n_enc, n_dec = layer_counts(hparams)
    if not hparams.get("has_input", True):  # a language model: the decoder alone
        n_enc, input_length = 0, 0
    src, tgt = batch_size * input_length, batch_size * target_length
    ffn = lambda tokens: 2 * tokens * d * ff * 2  # noqa: E731
    rel = hparams.get("self_attention_type", "dot_product") == "dot_product_relative"
    encoder = n_enc * (
        _attention(d, key, value, src, src, batch_size * input_length**2, rel) + ffn(src)
    )
    decoder = n_dec * (
        _attention(d, key, value, tgt, tgt, batch_size * target_length**2, rel)
        + _attention(d, key, value, tgt, src, batch_size * target_length * input_length)
        + ffn(tgt)
    )
    if hparams.get("class_label_target", False):  # transformer_encoder: one pooled row each
        decoder, tgt = 0, batch_size
    softmax = 2 * tgt * d * logits_width(hparams)  # vocab_divisor's padded rows too
    return float(encoder + decoder + softmax)


def training_flops(hparams, batch_size: int, input_length: int, target_length: int) -> float:
    return 3.0 * forward_flops(hparams, batch_size, input_length, target_length)
