"""The Transformer model: ``{"inputs", "targets"}`` -> logits, plus encode / decode_step.

Wires the layers as T2T's ``Transformer`` does (``tensor2tensor/models/transformer.py``): shared
symbol embedding, a learned target-space row added to every encoder position, the positional signal,
dropout on the sums, the encoder and decoder stacks, and the tied softmax. A problem without
inputs (``has_input`` false: a language model) gets T2T's decoder alone (``Transformer.body``:
no encoder, no target-space row, no encoder-decoder attention); its ``inputs`` are ignored.
``encode``, ``init_cache`` and ``decode_step`` expose incremental decoding with a static-shape
cache whose ``decode_step(ids, i, cache)`` matches ``t2t_repro.decoding`` search functions.
"""

from __future__ import annotations

import dataclasses
import logging

import keras
import tensorflow as tf

from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.sizes import layer_counts, padded_vocab_size
from t2t_repro.layers.attention import buffer_length
from t2t_repro.layers.dropout import Dropout, SymbolDropout
from t2t_repro.layers.embedding import SymbolEmbedding
from t2t_repro.layers.transformer_layers import Decoder, Encoder
from t2t_repro.models.attention_biases import (
    BiasKinds,
    decode_step_bias,
    decoder_self_bias,
    encoder_biases,
)
from t2t_repro.models.layer_configs import (
    positional_signal,
    slot_features,
    stack_config,
    variable_initializer,
)
from t2t_repro.models.packing import Packing
from t2t_repro.registry import register_model


def shift_right(x: tf.Tensor) -> tf.Tensor:
    """[B, L, d] -> position i holds x[:, i - 1], position 0 the zero "GO" vector.

    A roll and a select rather than T2T's pad and slice (``common_layers.shift_right_3d``):
    the same values, and the slice's gradient (StridedSliceGrad) took 0.5% of a step."""
    rolled = tf.roll(x, 1, axis=1)
    after_first = tf.range(tf.shape(x)[1]) > 0
    return tf.where(after_first[None, :, None], rolled, tf.zeros_like(rolled))


@register_model
class Transformer(keras.Model):
    """Built from an hparams set that also carries ``input_vocab_size``/``target_vocab_size``."""

    def __init__(self, hparams: HParams | dict, **kwargs) -> None:
        kwargs.setdefault("name", "transformer")
        super().__init__(**kwargs)
        hp = hparams if isinstance(hparams, HParams) else HParams(**hparams)
        for required in ("input_vocab_size", "target_vocab_size"):
            if required not in hp:
                raise ValueError(f"Transformer hparams need {required!r} (set from the problem).")
        if hp.get("class_label_target", False):
            raise ValueError(
                "transformer has symbol targets; a class-label target (a Text2ClassProblem's) "
                "trains with --model=transformer_encoder, as in T2T."
            )
        self.hparams = hp
        # T2T's T2TModel.has_input: whether the problem has inputs (else a language model).
        self.has_input = bool(hp.get("has_input", True))
        d = hp.hidden_size
        sqrt_depth = hp.multiply_embedding_mode == "sqrt_depth"
        shared = hp.shared_embedding_and_softmax_weights
        # The embeddings' rows: the vocabularies rounded up by vocab_divisor, compared so by
        # T2T's T2TModel.__init__ when it decides to share (hparams_lib/sizes.py).
        input_rows = padded_vocab_size(hp.input_vocab_size, hp)
        target_rows = padded_vocab_size(hp.target_vocab_size, hp)
        if shared and input_rows != target_rows:
            logging.warning(
                "Input and target vocab sizes differ (%d vs %d): not sharing the "
                "embedding and softmax weights (as T2T does).",
                input_rows,
                target_rows,
            )
            shared = False
        self.target_embedding = SymbolEmbedding(
            target_rows, d, sqrt_depth, name="shared" if shared else "target_emb"
        )
        if shared or not self.has_input or (hp.shared_embedding and input_rows == target_rows):
            self.input_embedding = self.target_embedding
        else:
            self.input_embedding = SymbolEmbedding(input_rows, d, sqrt_depth, name="input_emb")
        self.softmax = (
            self.target_embedding
            if shared
            else SymbolEmbedding(target_rows, d, False, name="softmax")
        )
        # The decoder's positional signal, and the encoder's: the same but for pos=emb, whose
        # two tables are T2T's inputs_ and targets_positional_embedding.
        self.positional = positional_signal(hp, "targets")
        self.input_positional = self.positional
        if self.has_input and hp.pos == "emb":
            self.input_positional = positional_signal(hp, "inputs")
        self.embedding_dropout = Dropout(hp.layer_prepostprocess_dropout)
        self.symbol_dropout = SymbolDropout(hp.get("symbol_dropout", 0.0))
        self.bias_kinds = BiasKinds.of(hp)
        encoder_layers, decoder_layers = layer_counts(hp)
        if self.has_input:
            self.encoder = Encoder(stack_config(hp, encoder_layers), name="encoder")
        decoder_config = stack_config(hp, decoder_layers)
        self.decoder = Decoder(
            dataclasses.replace(decoder_config, encdec_attention=self.has_input), name="decoder"
        )
        # T2T adds the target-space row in transformer_prepare_encoder only: not without inputs.
        self.use_target_space = hp.use_target_space_embedding and self.has_input
        if self.use_target_space:
            self.target_space_embedding = self.add_weight(
                name="target_space_embedding",
                # T2T's 32 rows (models/transformer.py, transformer_prepare_encoder)
                shape=(hp.get("target_space_vocab_size", 32), d),
                initializer=variable_initializer(hp),
            )
        self.target_space_id = hp.get("target_space_id", 0)
        # Extra decoder-input features the hparams ask for (none by default, as T2T).
        self.slot_features = slot_features(hp)

    def build(self, features_shape=None) -> None:
        """Creates every variable from the hparams alone (no tracing, no dummy batch)."""
        hidden_shape = (None, None, self.hparams.hidden_size)
        for layer in {
            id(sub): sub
            for sub in (
                self.input_embedding,
                self.target_embedding,
                self.softmax,
                self.input_positional,
                self.positional,
            )
        }.values():
            layer.build()
        if self.has_input:
            self.encoder.build(hidden_shape)
        self.decoder.build(hidden_shape)
        self.built = True

    # -- full (teacher-forced) pass ---------------------------------------------------------
    def encode(
        self,
        inputs: tf.Tensor,
        training: bool = False,
        return_weights: bool = False,
        packing: Packing | None = None,
    ):
        """inputs [B, Ls] -> (encoder_output [B, Ls, d], encoder-decoder bias [B, 1, 1, Ls]).
        A packed batch (``packing``): attention within each example's segment, and the
        encoder-decoder bias is [B, 1, Lt, Ls] (``models/packing.py``). An id ``symbol_dropout``
        drops is padding from then on, as T2T reads padding off the embeddings."""
        ids = self.symbol_dropout(inputs, training=training)
        self_bias, bias, keep = encoder_biases(ids, self.bias_kinds, packing)
        positions = None if packing is None else packing.input_position
        x = self.input_embedding(ids)
        if self.use_target_space:
            x = x + tf.cast(self.target_space_embedding[self.target_space_id], x.dtype)
        x = self.input_positional(x, positions=positions)
        x = self.embedding_dropout(x, training=training)
        # A causal encoder's later positions attend to every earlier one, padding or not: its
        # training pass keeps every row (the FFN's pad remover still runs, as T2T's).
        out = self.encoder(
            x,
            self_bias,
            training=training,
            return_weights=return_weights,
            keep=keep,
            pack_rows=not self.bias_kinds.unidirectional_encoder,
        )
        if return_weights:
            return out[0], bias, out[1]
        return out, bias

    def decoder_hidden(
        self,
        targets: tf.Tensor,
        encoder_output: tf.Tensor,
        encoder_bias: tf.Tensor,
        training: bool = False,
        return_weights: bool = False,
        packing: Packing | None = None,
        decoding: bool = False,
        every_row: bool = False,
    ):
        """Teacher-forced decoder stack: targets [B, Lt] -> hidden [B, Lt, d] (pre-softmax).
        In training the stack skips the rows after each row's last target token (their output
        is 0: no loss reads it), unless ``every_row`` (targets that are not the labels:
        scheduled sampling's).
        ``decoding``: a search's prefix (``decoding/uncached.py``), attended causally whatever
        ``causal_decoder_self_attention`` says, as T2T's ``fast_decode`` attends.
        A packed batch (``packing``): self-attention within each example's segment, and the
        positional signal at each target's own position; the shift right still runs over the
        whole row, as T2T's (a segment's first input is the previous position's id)."""
        ids = self.symbol_dropout(targets, training=training)
        y = self.target_embedding(ids)
        y = shift_right(y)
        y = self.positional(y, positions=None if packing is None else packing.target_position)
        if self.slot_features is not None:
            y = self.slot_features.full_pass(
                y, targets, encoder_output, encoder_bias, self.input_positional
            )
        y = self.embedding_dropout(y, training=training)
        kinds = self.bias_kinds
        if decoding:
            kinds = dataclasses.replace(kinds, causal_decoder_self_attention=True)
        self_bias = decoder_self_bias(ids, kinds, packing)  # (a dropped id is padding, as T2T's)
        memory_keep = None
        if packing is not None and packing.input_segment is not None:
            memory_keep = packing.input_nonpadding()
        return self.decoder(
            y,
            encoder_output,
            self_bias,
            encoder_bias,
            training=training,
            return_weights=return_weights,
            target_ids=None if every_row else targets,
            memory_keep=memory_keep,
        )

    def decode(
        self,
        targets: tf.Tensor,
        encoder_output: tf.Tensor,
        encoder_bias: tf.Tensor,
        training: bool = False,
        return_weights: bool = False,
    ):
        """Teacher-forced decoder: targets [B, Lt] -> logits [B, Lt, V].

        float32, except under a mixed_bfloat16 policy: bf16 logits go to the loss as they are
        (``losses.token_losses`` reads them in float32 inside one fused kernel), sparing a
        float32 copy of [B, Lt, V] and its gradient's cast.
        """
        out = self.decoder_hidden(
            targets, encoder_output, encoder_bias, training=training, return_weights=return_weights
        )
        hidden, weights = out if return_weights else (out, None)
        logits = self.output_logits(hidden)
        return (logits, weights) if return_weights else logits

    def output_logits(self, hidden: tf.Tensor) -> tf.Tensor:
        """Decoder hidden states [..., d] -> logits [..., V], row by row (see ``decode``)."""
        logits = self.softmax.logits(hidden)
        return logits if logits.dtype == tf.bfloat16 else tf.cast(logits, tf.float32)

    pads_targets = True  # targets are sequences padded with PAD (id 0), which no loss counts

    def target_weights(self, targets: tf.Tensor) -> tf.Tensor:
        """Which targets the loss and metrics count: T2T's ``weights_nonzero`` of a symbol
        target (``layers/modalities.py``, ``get_weights_fn``): not PAD."""
        return tf.cast(tf.not_equal(targets, 0), tf.float32)

    def decoder_output(
        self, features: dict, training: bool = False, every_row: bool = False
    ) -> tf.Tensor:
        """The full teacher-forced pass up to the softmax: features -> hidden [B, Lt, d];
        ``call`` is ``output_logits`` of it (the trainer's loss projects fewer rows). A packed
        batch's segmentations and positions are read when present (``models/packing.py``).
        ``every_row``: see ``decoder_hidden``."""
        packing = self.packing_of(features)
        encoder_output = bias = None
        if self.has_input:
            encoder_output, bias = self.encode(
                features["inputs"], training=training, packing=packing
            )
        return self.decoder_hidden(
            features["targets"],
            encoder_output,
            bias,
            training=training,
            packing=packing,
            every_row=every_row,
        )

    def packing_of(self, features: dict) -> Packing | None:
        """The batch's ``Packing``, None when it is not packed; one line where this model
        cannot keep packed examples apart."""
        packing = Packing.of(features, self.has_input)
        if packing is not None and self.slot_features is not None:
            raise ValueError(
                "slot_signal counts the slots of a whole target row: it cannot read a packed "
                "batch (pack_dataset or a *_packed problem); train it on unpacked data."
            )
        return packing

    def call(self, features: dict, training: bool = False) -> tf.Tensor:
        return self.output_logits(self.decoder_output(features, training=training))

    def attention_weights(self, inputs: tf.Tensor, targets: tf.Tensor) -> dict:
        """Per-layer attention maps (for plots): encoder self, decoder self, encoder-decoder
        (a language model: decoder self only)."""
        encoder_output = bias = None
        enc_w = []
        if self.has_input:
            encoder_output, bias, enc_w = self.encode(inputs, return_weights=True)
        _, dec_w = self.decode(targets, encoder_output, bias, return_weights=True)
        return {
            "encoder_self": enc_w,
            "decoder_self": [w[0] for w in dec_w],
            "encdec": [w[1] for w in dec_w] if self.has_input else [],
        }

    # -- incremental decoding --------------------------------------------------------------
    def init_cache(self, inputs: tf.Tensor, decode_length: int) -> dict:
        """Runs the encoder once; returns the cache for ``decode_length`` steps. A language
        model has no encoder: ``inputs`` (its prompt) only give the batch size."""
        if not self.has_input:
            return self.decoder.init_cache(
                None, decode_length, tf.shape(inputs)[0], self.decoder.compute_dtype
            )
        encoder_output, bias = self.encode(inputs)
        cache = self.decoder.init_cache(encoder_output, decode_length)
        cache["encoder_bias"] = bias
        if "encoder_output" in self._feature_cache_keys:
            cache["encoder_output"] = encoder_output
        return cache

    @property
    def _feature_cache_keys(self) -> tuple[str, ...]:
        return () if self.slot_features is None else self.slot_features.cache_keys

    # Cache entries that no step changes (the encoder's keys/values and output, the padding
    # bias): a search may hold them outside its loop state instead of reordering them.
    CONSTANT_CACHE_KEYS = ("encdec_attention", "encoder_bias", "encoder_output")
    # Cache entries a step writes at position i of axis 2 (and reads up to i): beam search
    # may keep them in place instead of reordering them (decoding/beam_search.py).
    POSITION_CACHE_KEYS = ("self_attention",)
    _MODEL_CACHE_KEYS = ("encoder_bias", "encoder_output")  # not the decoder layers'

    def decode_step(self, ids: tf.Tensor, i, cache: dict) -> tuple[tf.Tensor, dict]:
        """Consumes ``ids[:, i]`` (position i) and returns logits [N, V] for position i."""
        x = self.target_embedding(tf.gather(ids, [i], axis=1))  # [N, 1]: ids[:, i:i + 1]
        x = x * tf.cast(i > 0, x.dtype)  # Position 0 is the zero GO vector, as in training.
        x = self.positional(x, start=i)
        if self.slot_features is not None:
            x = self.slot_features.step(
                x, ids, i, cache.get("encoder_output"), cache["encoder_bias"], self.input_positional
            )
        layer_cache = {k: v for k, v in cache.items() if k not in self._MODEL_CACHE_KEYS}
        step_bias = None
        if self.bias_kinds.proximity_bias:  # T2T's fast_decode adds it at every step
            length = buffer_length(layer_cache["layer_0"]["self_attention"][0])
            step_bias = decode_step_bias(i, length, self.bias_kinds)
        hidden, layer_cache = self.decoder.step(
            x, layer_cache, i, cache.get("encoder_bias"), step_bias
        )
        logits = tf.cast(self.softmax.logits(tf.squeeze(hidden, 1)), tf.float32)
        layer_cache.update({k: cache[k] for k in self._MODEL_CACHE_KEYS if k in cache})
        return logits, layer_cache

    def build_for(self, batch: int = 1, length: int = 2) -> None:
        """Builds the variables and runs one dummy batch (e.g. before loading weights)."""
        self.build()
        dummy = tf.ones([batch, length], tf.int32)
        self({"inputs": dummy, "targets": dummy}, training=False)

    def get_config(self) -> dict:
        return {"hparams": self.hparams.values(), "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> Transformer:
        return cls(HParams(**config["hparams"]), name=config.get("name", "transformer"))
