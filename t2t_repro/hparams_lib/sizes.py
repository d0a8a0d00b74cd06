"""The model sizes a set's hparams give, with T2T's "0 falls back" read in one place.

T2T reads ``hparams.num_encoder_layers or hparams.num_hidden_layers``
(``layers/transformer_layers.py``, ``transformer_encoder``), the same for the decoder
(``models/transformer.py``, ``transformer_decoder``), and ``hparams.attention_key_channels or
hparams.hidden_size`` (and the same for values) in each of their ``multihead_attention``
calls. The model, the FLOP count, the warm start's shape check and the hparams checks read
them here.
"""

from __future__ import annotations

from t2t_repro.hparam import HParams


def layer_counts(hp: HParams) -> tuple[int, int]:
    """(encoder layers, decoder layers); None for both if the set has no num_hidden_layers and
    neither count of its own."""
    layers = hp.get("num_hidden_layers")
    return hp.get("num_encoder_layers", 0) or layers, hp.get("num_decoder_layers", 0) or layers


def attention_channels(hp: HParams) -> tuple[int, int]:
    """(key channels, value channels) of every attention."""
    hidden = hp.get("hidden_size")
    return (
        hp.get("attention_key_channels", 0) or hidden,
        hp.get("attention_value_channels", 0) or hidden,
    )
