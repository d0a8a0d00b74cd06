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

PACKED_FEATURES = (
    "inputs_segmentation",
    "inputs_position",
    "targets_segmentation",
    "targets_position",
)


@dataclasses.dataclass(frozen=True)
class Packing:
    """The segment ids and positions of a packed batch ([B, L] ints); the input side's are
    None for a model without inputs (a language model packs its targets only)."""

    target_segment: tf.Tensor
    target_position: tf.Tensor
    input_segment: tf.Tensor | None = None
    input_position: tf.Tensor | None = None

    @classmethod
    def of(cls, features: dict, has_input: bool) -> Packing | None:
        """None for an unpacked batch (no ``targets_segmentation``). As T2T's
        ``Problem._preprocess`` (``data_generators/problem.py``), the targets' segmentation
        and positions default to the inputs' when only those are given."""
        if "inputs_segmentation" not in features and "targets_segmentation" not in features:
            return None
        given = dict(features)
        for kind in ("segmentation", "position"):
            if f"inputs_{kind}" in given:
                given.setdefault(f"targets_{kind}", given[f"inputs_{kind}"])
        needed = PACKED_FEATURES if has_input else PACKED_FEATURES[2:]
        missing = [name for name in needed if name not in given]
        if missing:
            raise ValueError(
                f"a packed batch needs {', '.join(needed)}; missing: {', '.join(missing)} "
                "(T2T's packed datasets write them all)."
            )
        inputs = {}
        if has_input:
            inputs = dict(
                input_segment=given["inputs_segmentation"], input_position=given["inputs_position"]
            )
        return cls(given["targets_segmentation"], given["targets_position"], **inputs)

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
