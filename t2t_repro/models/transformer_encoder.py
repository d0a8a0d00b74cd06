"""T2T's ``transformer_encoder`` with a class-label target: a text classifier.

As T2T 1.15.7 computes it (``tensor2tensor/models/transformer.py``, ``TransformerEncoder.body``;
``layers/modalities.py``, ``class_label_top``): the inputs embedded (with the target-space row
and the positional signal, ``transformer_prepare_encoder``), the encoder stack, its output
averaged over every position of the batch (padding included, as T2T's ``reduce_mean`` does), and
a dense layer (kernel and bias) to the classes. Every class id is a real label, so the loss and
the metrics weigh every target (T2T's ``weights_all``), class 0 too (``target_weights``).

The problem says it has a class-label target with the problem hparam ``class_label_target``
(``hparams_lib/build.py``); this model refuses any other target, and ``transformer`` refuses
a class label, each in one line. A multi-label target (T2T's ``MULTI_LABEL``, problem hparam
``multi_label_target``) has the same bottom and top (``class_label_top``); its targets are label
lists padded with 0, weighed by ``weights_nonzero`` (a label 0 is padding, as in T2T), and its
loss is T2T's ``multi_label_loss`` (``losses.multi_label_loss``).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.sizes import layer_counts, padded_vocab_size
from t2t_repro.layers.dropout import Dropout, SymbolDropout
from t2t_repro.layers.embedding import SymbolEmbedding
from t2t_repro.layers.transformer_layers import Encoder
from t2t_repro.models.attention_biases import BiasKinds
from t2t_repro.models.layer_configs import positional_signal, stack_config, variable_initializer
from t2t_repro.models.transformer import Transformer
from t2t_repro.registry import register_model


class PooledEncoder(Encoder):
    """The encoder stack whose every position's output is kept in training too: the pooled
    mean reads the padding positions' outputs (``class_label_top``), so the stack cannot run
    on the real tokens' rows only (``_Stack.packs_rows``); the FFN's pad remover still runs."""

    def packs_rows(self, training: bool, return_weights: bool) -> bool:
        return False


@register_model
class TransformerEncoder(Transformer):
    """``{"inputs", "targets"}`` -> class logits [B, 1, num_classes] (``target_vocab_size``)."""

    def __init__(self, hparams: HParams | dict, **kwargs) -> None:
        kwargs.setdefault("name", "transformer_encoder")
        keras.Model.__init__(self, **kwargs)
        hp = hparams if isinstance(hparams, HParams) else HParams(**hparams)
        for required in ("input_vocab_size", "target_vocab_size"):
            if required not in hp:
                raise ValueError(f"Transformer hparams need {required!r} (set from the problem).")
        if not hp.get("class_label_target", False):
            raise ValueError(
                "transformer_encoder is T2T's text classifier: it needs a problem with a "
                "class-label target (a Text2ClassProblem); train --model=transformer here."
            )
        self.hparams = hp
        self.has_input = True
        self.multi_label = bool(hp.get("multi_label_target", False))
        d = hp.hidden_size
        # T2T's symbol_bottom: the input embedding's scope is "shared" when a sharing hparam
        # is on; T2TModel.__init__ unsets shared_embedding_and_softmax_weights when the input
        # and target (class) vocabulary sizes differ. vocab_divisor rounds both up, classes
        # too (T2TModel._top_single: class_label_top's units; hparams_lib/sizes.py).
        input_rows = padded_vocab_size(hp.input_vocab_size, hp)
        classes = padded_vocab_size(hp.target_vocab_size, hp)
        shared = hp.get("shared_embedding", False) or (
            hp.shared_embedding_and_softmax_weights and input_rows == classes
        )
        self.input_embedding = SymbolEmbedding(
            input_rows,
            d,
            hp.multiply_embedding_mode == "sqrt_depth",
            name="shared" if shared else "input_emb",
        )
        self.input_positional = positional_signal(hp, "inputs")
        self.embedding_dropout = Dropout(hp.layer_prepostprocess_dropout)
        self.symbol_dropout = SymbolDropout(hp.get("symbol_dropout", 0.0))
        self.bias_kinds = BiasKinds.of(hp)
        self.encoder = PooledEncoder(stack_config(hp, layer_counts(hp)[0]), name="encoder")
        self.use_target_space = hp.use_target_space_embedding
        if self.use_target_space:
            self.target_space_embedding = self.add_weight(
                name="target_space_embedding",
                shape=(hp.target_space_vocab_size, d),
                initializer=variable_initializer(hp),
            )
        self.target_space_id = hp.get("target_space_id", 0)
        # class_label_top's tf.layers.dense under T2T's default variable initializer.
        self.class_label = keras.layers.Dense(
            classes, kernel_initializer=variable_initializer(hp), name="dense"
        )
        self.slot_features = None

    def build(self, features_shape=None) -> None:
        d = self.hparams.hidden_size
        self.input_embedding.build()
        self.input_positional.build()
        self.encoder.build((None, None, d))
        self.class_label.build((None, d))
        for weight in self.class_label.weights:  # T2T's class_label_top is not under /body/
            weight.t2t_outside_body = True  # so T2T's weight_noise skips it (regularization.py)
        self.built = True

    pads_targets = False  # one class label per example, any id

    def target_weights(self, targets: tf.Tensor) -> tf.Tensor:
        """T2T's ``weights_all`` (``modalities.get_weights_fn`` of CLASS_LABEL): every label
        counts, class 0 included; ``weights_nonzero`` for MULTI_LABEL (0 pads a label list)."""
        if self.multi_label:
            return tf.cast(tf.not_equal(targets, 0), tf.float32)
        return tf.ones_like(targets, tf.float32)

    def decoder_output(self, features: dict, training: bool = False) -> tf.Tensor:
        """The encoder's output averaged over every position (``class_label_top``'s
        ``reduce_mean``): [B, 1, d], one row per example (the trainer's loss projects it)."""
        if self.packing_of(features) is not None:
            raise ValueError(
                "transformer_encoder pools a whole row into one class: a packed batch "
                "(pack_dataset or a *_packed problem) would classify several examples as one; "
                "train it on unpacked data."
            )
        encoder_output, _ = self.encode(features["inputs"], training=training)
        return tf.reduce_mean(encoder_output, axis=1, keepdims=True)

    def output_logits(self, hidden: tf.Tensor) -> tf.Tensor:
        """Pooled rows [..., d] -> class logits [..., num_classes] (float32)."""
        return tf.cast(self.class_label(hidden), tf.float32)

    def attention_weights(self, inputs: tf.Tensor, targets: tf.Tensor) -> dict:
        del targets
        _, _, enc_w = self.encode(inputs, return_weights=True)
        return {"encoder_self": enc_w, "decoder_self": [], "encdec": []}

    def init_cache(self, inputs: tf.Tensor, decode_length: int) -> dict:
        raise ValueError(
            "transformer_encoder classifies: it has no decoder to search with; decode it with "
            "t2t-decoder, which writes each line's label."
        )

    def decode_step(self, ids, i, cache):
        return self.init_cache(ids, 0)

    @classmethod
    def from_config(cls, config: dict) -> TransformerEncoder:
        return cls(HParams(**config["hparams"]), name=config.get("name", "transformer_encoder"))
