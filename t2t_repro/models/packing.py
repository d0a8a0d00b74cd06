"""A packed batch's features, as T2T's transformer reads them.

T2T's packed datasets (``generator_utils.pack_examples`` at datagen, ``pack_dataset`` on the
fly) put several examples in one row and add ``<feature>_segmentation`` (which example each
position is of, 1, 2, ...; 0 for padding and spacing) and ``<feature>_position`` (its position
in that example). The model then keeps the examples apart: attention only within a segment
(``common_attention.attention_bias_same_segment``), the positional signal at each token's own
position, and the encoder's padding from the segmentation (``models/transformer.py``,
``features_to_nonpadding``; ``layers/transformer_layers.py``, ``transformer_prepare_encoder``).
Without these features nothing here runs: an unpacked batch is computed as before.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from t2t_repro.layers.attention import attention_bias_same_segment


@dataclasses.dataclass(frozen=True)
class Packing:
    """The segment ids and positions of a packed batch ([B, L] ints); the input side's are
    None for a model without inputs (a language model) or a batch whose inputs are not packed
    (then T2T's encoder is the unpacked one)."""

    target_segment: tf.Tensor
    target_position: tf.Tensor
    input_segment: tf.Tensor | None = None
    input_position: tf.Tensor | None = None

    @classmethod
    def of(cls, features: dict, has_input: bool) -> Packing | None:
        """None for an unpacked batch. As T2T's transformer reads them: the encoder is packed
        when the batch has ``inputs_segmentation`` (it then reads ``inputs_position`` and
        ``targets_segmentation`` too: ``transformer_prepare_encoder``), the decoder when it has
        ``targets_segmentation`` (and ``targets_position``: ``transformer_prepare_decoder``);
        a model without inputs reads the targets' only."""
        packed_inputs = has_input and "inputs_segmentation" in features
        if not packed_inputs and "targets_segmentation" not in features:
            return None
        needed = ["targets_segmentation", "targets_position"]
        if packed_inputs:
            needed.insert(0, "inputs_position")
        missing = [name for name in needed if name not in features]
        if missing:
            given = [n for n in features if n.endswith(("_segmentation", "_position"))]
            raise ValueError(
                f"a packed batch's {', '.join(given)} need {', '.join(missing)} too (T2T's "
                "transformer reads them together; its packed datasets write them all)."
            )
        inputs = {}
        if packed_inputs:
            inputs = dict(
                input_segment=features["inputs_segmentation"],
                input_position=features["inputs_position"],
            )
        return cls(features["targets_segmentation"], features["targets_position"], **inputs)

    def encoder_biases(self) -> tuple[tf.Tensor, tf.Tensor]:
        """(encoder self-attention [B, 1, Ls, Ls], encoder-decoder [B, 1, Lt, Ls]) biases."""
        return (
            attention_bias_same_segment(self.input_segment, self.input_segment),
            attention_bias_same_segment(self.target_segment, self.input_segment),
        )

    def input_nonpadding(self) -> tf.Tensor:
        """[B, Ls] bool: the positions of an example (T2T's ``features_to_nonpadding``)."""
        return tf.not_equal(self.input_segment, 0)

    def decoder_self_bias(self) -> tf.Tensor:
        """[B, 1, Lt, Lt]: within a segment only (added to the causal bias, as T2T does)."""
        return attention_bias_same_segment(self.target_segment, self.target_segment)
