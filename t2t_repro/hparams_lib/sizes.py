"""The model sizes a set's hparams give, with T2T's "0 falls back" read in one place.

T2T reads ``hparams.num_encoder_layers or hparams.num_hidden_layers``
(``layers/transformer_layers.py``, ``transformer_encoder``), the same for the decoder
(``models/transformer.py``, ``transformer_decoder``), and ``hparams.attention_key_channels or
hparams.hidden_size`` (and the same for values) in each of their ``multihead_attention``
calls. The model, the FLOP count, the warm start's shape check and the hparams checks read
them here, and the vocabulary sizes rounded up by ``vocab_divisor`` (``padded_vocab_size``).
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


def padded_vocab_size(size: int | None, hp: HParams) -> int | None:
    """``size`` rounded up to a multiple of T2T's ``vocab_divisor``: the rows of a symbol
    embedding and softmax, the logits' width, what the loss smooths over and every search
    chooses from. T2T rounds each feature's vocabulary size so wherever it reads one
    (``utils/t2t_model.py``: ``T2TModel.__init__``, ``bottom``, ``_top_single``,
    ``_loss_single``, ``_slow_greedy_infer``, ``_beam_decode_slow``; ``models/transformer.py``:
    ``_prepare_inputs_for_decode``, ``_fast_decode``); the problem's size stays what its
    vocabulary holds, and a padded id has no text. None (no vocabulary) stays None."""
    return None if size is None else size + (-size) % hp.get("vocab_divisor", 1)


def logits_width(hp: HParams) -> int:
    """How many classes the model's logits have: the padded target vocabulary."""
    return padded_vocab_size(hp.get("target_vocab_size"), hp)
