"""Encoder and decoder stacks of the Transformer
(``tensor2tensor/models/transformer.py``, ``transformer_encoder`` / ``transformer_decoder``).

Each sublayer is wrapped by ``prepost.Residual`` (``AttentionResidual`` for attention); a
stack ends with its preprocess sequence applied once more, which with T2T's pre-norm ``n``
is the final LayerNorm and with the paper's ``none`` is nothing. The decoder also runs one
position at a time (``step``) against a fixed-size key/value cache so incremental decoding
has static shapes (XLA-compilable).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import keras
import tensorflow as tf

from t2t_repro.layers.attention import MultiHeadAttention
from t2t_repro.layers.feed_forward import DenseReluDense
from t2t_repro.layers.initializers import GLOROT_UNIFORM
from t2t_repro.layers.pad_remover import PadRemover, in_xla
from t2t_repro.layers.prepost import AttentionResidual, LayerPrePostProcess, Residual


@dataclass(frozen=True)
class StackConfig:
    """What an encoder or decoder stack needs to know; built from hparams by the model."""

    num_layers: int
    hidden_size: int
    filter_size: int
    num_heads: int
    key_channels: int
    value_channels: int
    attention_dropout: float
    relu_dropout: float
    prepost_dropout: float
    preprocess: str
    postprocess: str
    epsilon: float = 1e-6
    use_pad_remover: bool = False  # T2T's PadRemover around the FFN (decoder: training only).
    # > 0: self-attention is T2T's dot_product_relative with this clipping distance.
    max_relative_position: int = 0
    # T2T's *_dropout_broadcast_dims: dimensions along which each dropout shares its mask.
    attention_broadcast_dims: tuple[int, ...] = ()
    relu_broadcast_dims: tuple[int, ...] = ()
    prepost_broadcast_dims: tuple[int, ...] = ()
    # False: a decoder without encoder-decoder attention, T2T's language model (``has_input``
    # false: ``transformer_decoder_layer`` skips it when ``encoder_output`` is None).
    encdec_attention: bool = True
    # T2T's default variable initializer of the kernels (layers/initializers.py).
    initializer: str | dict = GLOROT_UNIFORM
    # T2T's hard attention (every attention of the stack; layers/hard_attention.py).
    hard_attention_k: int = 0
    gumbel_noise_weight: float = 0.0
    # T2T's attention_variables_3d (every attention of the stack; layers/attention.py).
    attention_variables_3d: bool = False

    @classmethod
    def of(cls, config: StackConfig | dict) -> StackConfig:
        """``config`` itself, or the StackConfig its ``asdict`` came from (``from_config``; a
        saved model's JSON turns the broadcast dims' tuples into lists)."""
        if isinstance(config, cls):
            return config
        dims = ("attention_broadcast_dims", "relu_broadcast_dims", "prepost_broadcast_dims")
        return cls(**{k: tuple(v) if k in dims else v for k, v in config.items()})


def _attention(cfg: StackConfig, name: str) -> AttentionResidual:
    """T2T's self-attention takes ``self_attention_type``; encoder-decoder attention is
    always ``dot_product`` (``models/transformer.py``, ``transformer_decoder_layer``)."""
    attention = MultiHeadAttention(
        cfg.num_heads,
        cfg.key_channels,
        cfg.value_channels,
        cfg.hidden_size,
        cfg.attention_dropout,
        max_relative_position=cfg.max_relative_position if name == "self_attention" else 0,
        dropout_broadcast_dims=cfg.attention_broadcast_dims,
        kernel_initializer=cfg.initializer,
        hard_attention_k=cfg.hard_attention_k,
        gumbel_noise_weight=cfg.gumbel_noise_weight,
        vars_3d=cfg.attention_variables_3d,
        name="multihead_attention",
    )
    return AttentionResidual(
        attention,
        cfg.preprocess,
        cfg.postprocess,
        cfg.prepost_dropout,
        cfg.epsilon,
        cfg.prepost_broadcast_dims,
        name=name,
    )


def _ffn(cfg: StackConfig) -> Residual:
    ffn = DenseReluDense(
        cfg.filter_size,
        cfg.hidden_size,
        cfg.relu_dropout,
        cfg.relu_broadcast_dims,
        kernel_initializer=cfg.initializer,
        name="dense_relu_dense",
    )
    return Residual(
        ffn,
        cfg.preprocess,
        cfg.postprocess,
        cfg.prepost_dropout,
        cfg.epsilon,
        cfg.prepost_broadcast_dims,
        name="ffn",
    )


class _Stack(keras.layers.Layer):
    def __init__(self, config: StackConfig | dict, **kwargs) -> None:
        super().__init__(**kwargs)
        self.config = StackConfig.of(config)
        self.final = LayerPrePostProcess(
            self.config.preprocess,
            self.config.prepost_dropout,
            self.config.epsilon,
            allow_add=False,
            dropout_broadcast_dims=self.config.prepost_broadcast_dims,
            name="layer_prepostprocess",
        )

    @property
    def layers_(self) -> list:
        """The layers in order. They are attributes (not a list) so checkpoints track them."""
        return [getattr(self, f"layer_{i}") for i in range(self.config.num_layers)]

    def packs_rows(self, training: bool, return_weights: bool) -> bool:
        """Whether this pass runs on kept rows only: a training pass (not under XLA, whose
        shapes are static) of a stack that uses the pad remover (``layers/pad_remover.py``)."""
        return training and self.config.use_pad_remover and not return_weights and not in_xla()

    def build(self, x_shape, *unused_shapes, **unused_named_shapes) -> None:
        for layer in self.layers_:
            layer.build(x_shape, x_shape)
        self.final.build(x_shape)
        self.built = True

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(config=asdict(self.config))
        return config


@keras.saving.register_keras_serializable(package="t2t_repro")
class EncoderLayer(keras.layers.Layer):
    def __init__(self, cfg: StackConfig | dict, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cfg = cfg = StackConfig.of(cfg)
        self.self_attention = _attention(cfg, "self_attention")
        self.ffn = _ffn(cfg)

    def build(self, x_shape, bias_shape=None) -> None:
        self.self_attention.build(x_shape)
        self.ffn.build(x_shape)
        self.built = True

    def call(self, x, bias, training=False, return_weights=False, pad_remover=None, rows=None):
        """``pad_remover``: the FFN's (T2T); ``rows``: ``x`` holds the kept rows of one."""
        x = self.self_attention(
            x, None, bias, training=training, return_weights=return_weights, rows=rows
        )
        weights = None
        if return_weights:
            x, weights = x
        x = self.ffn(x, training=training, pad_remover=pad_remover, rows=rows)
        return (x, weights) if return_weights else x

    def get_config(self) -> dict:
        return {**super().get_config(), "cfg": asdict(self.cfg)}


@keras.saving.register_keras_serializable(package="t2t_repro")
class Encoder(_Stack):
    """``num_layers`` x [self-attention, FFN], then the final preprocess (pre-norm LN)."""

    def __init__(self, config: StackConfig | dict, **kwargs) -> None:
        super().__init__(config, **kwargs)
        for i in range(self.config.num_layers):
            setattr(self, f"layer_{i}", EncoderLayer(self.config, name=f"layer_{i}"))

    def call(self, x, bias, training=False, return_weights=False, keep=None, pack_rows=True):
        """In training the whole stack runs on the real tokens' rows (``packs_rows``): the
        output is 0 at padding, which every attention over it masks. Otherwise the FFNs use
        T2T's pad remover (``use_pad_remover``). ``keep`` [B, L]: the real tokens where
        ``bias`` does not say them (a packed batch's segment bias; T2T's ``nonpadding``).
        ``pack_rows`` False: every row runs (a causal encoder attends to left-out rows)."""
        all_weights = []
        rows = pad_remover = None
        if pack_rows and self.packs_rows(training, return_weights):
            rows = PadRemover(keep) if keep is not None else PadRemover.from_padding_bias(bias)
            x = rows.remove(x)
        elif self.config.use_pad_remover:
            pad_remover = (
                PadRemover(keep) if keep is not None else PadRemover.from_padding_bias(bias)
            )
        for layer in self.layers_:
            x = layer(
                x,
                bias,
                training=training,
                return_weights=return_weights,
                pad_remover=pad_remover,
                rows=rows,
            )
            if return_weights:
                x, w = x
                all_weights.append(w)
        x = self.final(x, training=training, rows=rows)
        if rows is not None:
            x = rows.restore(x)
        return (x, all_weights) if return_weights else x


@keras.saving.register_keras_serializable(package="t2t_repro")
class DecoderLayer(keras.layers.Layer):
    """Causal self-attention, encoder-decoder attention (unless ``encdec_attention`` is off:
    a language model's decoder), FFN; ``step`` decodes one position."""

    def __init__(self, cfg: StackConfig | dict, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cfg = cfg = StackConfig.of(cfg)
        self.self_attention = _attention(cfg, "self_attention")
        if cfg.encdec_attention:
            self.encdec_attention = _attention(cfg, "encdec_attention")
        self.ffn = _ffn(cfg)

    def build(
        self, x_shape, memory_shape=None, self_bias_shape=None, memory_bias_shape=None
    ) -> None:
        self.self_attention.build(x_shape)
        if self.cfg.encdec_attention:
            self.encdec_attention.build(x_shape, memory_shape or x_shape)
        self.ffn.build(x_shape)
        self.built = True

    def call(
        self,
        x,
        memory,
        self_bias,
        memory_bias,
        training=False,
        return_weights=False,
        rows=None,
        memory_rows=None,
    ):
        """``rows`` / ``memory_rows``: ``x`` / ``memory`` hold kept rows (``Decoder.call``)."""
        x = self.self_attention(
            x, bias=self_bias, training=training, return_weights=return_weights, rows=rows
        )
        if return_weights:
            x, w_self = x
        w_encdec = None
        if self.cfg.encdec_attention:
            x = self.encdec_attention(
                x,
                memory,
                bias=memory_bias,
                training=training,
                return_weights=return_weights,
                rows=rows,
                memory_rows=memory_rows,
            )
            if return_weights:
                x, w_encdec = x
        x = self.ffn(x, training=training, rows=rows)
        return (x, (w_self, w_encdec)) if return_weights else x

    def init_cache(self, memory: tf.Tensor, max_length: int, batch_size=None, dtype=None) -> dict:
        """Empty self-attention buffers for ``max_length`` positions, and the encoder-decoder
        keys/values, computed here once per sentence rather than at every step. Without
        encoder-decoder attention ``memory`` is None and ``batch_size``/``dtype`` size the
        buffers."""
        if memory is not None:
            batch_size, dtype = tf.shape(memory)[0], memory.dtype
        cache = {
            "self_attention": self.self_attention.sublayer.empty_cache(
                batch_size, max_length, dtype
            )
        }
        if self.cfg.encdec_attention:
            cache["encdec_attention"] = self.encdec_attention.sublayer.compute_key_value(memory)
        return cache

    def step(self, x, cache: dict, index, memory_bias, self_bias=None) -> tuple[tf.Tensor, dict]:
        """``call`` for one position ``x`` [N, 1, d] at ``index``, against ``init_cache``'s
        cache; returns the output and the cache with this position's keys/values written.
        ``self_bias``: added to the self-attention's (T2T's proximity bias row)."""
        x, self_kv = self.self_attention(
            x, bias=self_bias, cache=cache["self_attention"], cache_update_index=index
        )
        new_cache = {"self_attention": self_kv}
        if self.cfg.encdec_attention:
            x, new_cache["encdec_attention"] = self.encdec_attention(
                x, bias=memory_bias, cache=cache["encdec_attention"]
            )
        x = self.ffn(x)
        return x, new_cache

    def get_config(self) -> dict:
        return {**super().get_config(), "cfg": asdict(self.cfg)}


@keras.saving.register_keras_serializable(package="t2t_repro")
class Decoder(_Stack):
    """``num_layers`` x [causal self-attention, encoder-decoder attention, FFN], final LN;
    without ``encdec_attention`` (a language model) ``memory`` and ``memory_bias`` are None."""

    def __init__(self, config: StackConfig | dict, **kwargs) -> None:
        super().__init__(config, **kwargs)
        for i in range(self.config.num_layers):
            setattr(self, f"layer_{i}", DecoderLayer(self.config, name=f"layer_{i}"))

    def call(
        self,
        x,
        memory,
        self_bias,
        memory_bias,
        training=False,
        return_weights=False,
        target_ids=None,
        memory_keep=None,
    ):
        """``target_ids`` [B, L] (training, ``packs_rows``): the stack runs on the rows up to
        each target's last token (``PadRemover.after_last_token``) and the encoder-decoder
        keys and values on the source's real tokens (``memory_keep`` [B, Ls] where
        ``memory_bias`` does not say them: a packed batch's); the output is 0 after the last
        token."""
        all_weights = []
        rows = memory_rows = None
        if target_ids is not None and self.packs_rows(training, return_weights):
            rows = PadRemover.after_last_token(target_ids)
            x = rows.remove(x)
            if memory is not None:
                memory_rows = (
                    PadRemover(memory_keep)
                    if memory_keep is not None
                    else PadRemover.from_padding_bias(memory_bias)
                )
                memory = memory_rows.remove(memory)
        for layer in self.layers_:
            x = layer(
                x,
                memory,
                self_bias,
                memory_bias,
                training=training,
                return_weights=return_weights,
                rows=rows,
                memory_rows=memory_rows,
            )
            if return_weights:
                x, w = x
                all_weights.append(w)
        x = self.final(x, training=training, rows=rows)
        if rows is not None:
            x = rows.restore(x)
        return (x, all_weights) if return_weights else x

    def init_cache(self, memory: tf.Tensor, max_length: int, batch_size=None, dtype=None) -> dict:
        """Each layer's cache (``DecoderLayer.init_cache``) for ``max_length`` steps."""
        return {
            f"layer_{i}": layer.init_cache(memory, max_length, batch_size, dtype)
            for i, layer in enumerate(self.layers_)
        }

    def step(self, x, cache: dict, index, memory_bias, self_bias=None) -> tuple[tf.Tensor, dict]:
        new_cache = dict(cache)
        for i, layer in enumerate(self.layers_):
            x, new_cache[f"layer_{i}"] = layer.step(
                x, cache[f"layer_{i}"], index, memory_bias, self_bias
            )
        return self.final(x), new_cache
