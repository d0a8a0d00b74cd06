"""How an hparams set configures the transformer's layers: the stacks' ``StackConfig``, the
positional signals, T2T's variable initializer, relative attention's distance and the
decoder's slot features; shared by ``transformer.py`` and ``transformer_encoder.py``."""

from __future__ import annotations

from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.sizes import attention_channels
from t2t_repro.layers.dropout import parse_broadcast_dims
from t2t_repro.layers.initializers import t2t_initializer
from t2t_repro.layers.positional import PositionalSignal
from t2t_repro.layers.slot_features import SlotFeatures
from t2t_repro.layers.transformer_layers import StackConfig


def slot_features(hp: HParams) -> SlotFeatures | None:
    """The decoder's slot features (``layers/slot_features.py``) when the hparams ask for
    them: ``slot_signal`` (and ``slot_source_feed``), with the slot ids the problem names in
    its hparams (``target_slot_ids``, ``"first:end"``); None when off."""
    feed = bool(hp.get("slot_source_feed", False))
    if not hp.get("slot_signal", False):
        if feed:
            raise ValueError(
                "slot_source_feed=True reads the word each POS slot is for, which needs "
                "slot_signal=True too (and a problem that names its target_slot_ids)."
            )
        return None
    text = hp.get("target_slot_ids", "")
    if not text:
        raise ValueError(
            "slot_signal=True needs a problem whose targets fill the input's words one slot "
            "each (the wsj_parsing problems); this problem names no target_slot_ids."
        )
    try:
        first, end = (int(v) for v in text.split(":"))
    except ValueError:
        first, end = -1, -1
    if not 0 < first < end <= hp.target_vocab_size:
        raise ValueError(
            f"target_slot_ids={text!r} is not 'first:end' with 0 < first < end <= the target "
            f"vocab size {hp.target_vocab_size}."
        )
    return SlotFeatures(first, end, source_feed=feed, name="slot_features")


def variable_initializer(hp: HParams) -> str | dict:
    """T2T's default variable initializer from ``initializer`` and ``initializer_gain``
    (``layers/initializers.py``); a set without them has T2T's transformer values."""
    return t2t_initializer(
        hp.get("initializer", "uniform_unit_scaling"), hp.get("initializer_gain", 1.0)
    )


def positional_signal(hp: HParams, side: str) -> PositionalSignal:
    """The positional signal added to one side's embeddings: with ``pos=emb``, T2T's learned
    table of that side (``inputs_positional_embedding``, ``targets_positional_embedding``:
    ``models/transformer.py``, ``transformer_prepare_encoder`` and ``_decoder``) of
    ``max_length`` rows."""
    return PositionalSignal(
        hp.pos, hp.hidden_size, hp.max_length, variable_initializer(hp), name=f"{side}_positional"
    )


def stack_config(hp: HParams, num_layers: int) -> StackConfig:
    """``num_layers``: the stack's own count (``hparams_lib.sizes.layer_counts``)."""
    key_channels, value_channels = attention_channels(hp)
    return StackConfig(
        num_layers=num_layers,
        hidden_size=hp.hidden_size,
        filter_size=hp.filter_size,
        num_heads=hp.num_heads,
        key_channels=key_channels,
        value_channels=value_channels,
        attention_dropout=hp.attention_dropout,
        relu_dropout=hp.relu_dropout,
        prepost_dropout=hp.layer_prepostprocess_dropout,
        preprocess=hp.layer_preprocess_sequence,
        postprocess=hp.layer_postprocess_sequence,
        epsilon=hp.norm_epsilon,
        use_pad_remover=hp.get("use_pad_remover", False),
        max_relative_position=relative_distance(hp),
        # T2T reads them with getattr(hparams, name, ""): a set may lack them.
        attention_broadcast_dims=parse_broadcast_dims(
            "attention_dropout_broadcast_dims", hp.get("attention_dropout_broadcast_dims", "")
        ),
        relu_broadcast_dims=parse_broadcast_dims(
            "relu_dropout_broadcast_dims", hp.get("relu_dropout_broadcast_dims", "")
        ),
        prepost_broadcast_dims=parse_broadcast_dims(
            "layer_prepostprocess_dropout_broadcast_dims",
            hp.get("layer_prepostprocess_dropout_broadcast_dims", ""),
        ),
        initializer=variable_initializer(hp),
        # T2T passes both to every multihead_attention (models/transformer.py)
        hard_attention_k=hp.get("hard_attention_k", 0),
        gumbel_noise_weight=hp.get("gumbel_noise_weight", 0.0),
        # and vars_3d=hparams.get("attention_variables_3d") (layers/transformer_layers.py,
        # transformer_encoder; models/transformer.py, transformer_decoder_layer)
        attention_variables_3d=bool(hp.get("attention_variables_3d", False)),
    )


def relative_distance(hp: HParams) -> int:
    """T2T's ``max_relative_position`` when ``self_attention_type`` is ``dot_product_relative``
    (T2T reads it only then), else 0: plain dot-product self-attention."""
    kind = hp.get("self_attention_type", "dot_product")
    if kind == "dot_product":
        return 0
    if kind != "dot_product_relative":
        raise ValueError(
            f"self_attention_type={kind!r} is not implemented; use 'dot_product' or "
            "'dot_product_relative'."
        )
    if not hp.get("max_relative_position", 0) > 0:
        raise ValueError(
            "self_attention_type='dot_product_relative' needs max_relative_position > 0."
        )
    return hp.max_relative_position
