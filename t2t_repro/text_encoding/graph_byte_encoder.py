"""In-graph ``ByteTextEncoder.encode`` for SavedModel export: strings -> their UTF-8 bytes,
each shifted past the reserved ids (T2T's ``ByteTextEncoder``, ``VocabType.CHARACTER``).

Only encoding: a character model's sources (a text classifier's, say) are encoded in the graph;
decoding bytes to text would need Python's replacement of invalid UTF-8 exactly, so a byte
target vocabulary is not exported (``serving/exporter.py`` says so in one line).
"""

from __future__ import annotations

import tensorflow as tf


class GraphByteEncoder(tf.Module):
    """``encode(strings [B]) -> RaggedTensor [B, (bytes)]`` of int32 ids (byte + reserved)."""

    def __init__(self, num_reserved_ids: int, name: str | None = None) -> None:
        super().__init__(name=name)
        self.num_reserved_ids = num_reserved_ids

    def encode(self, strings: tf.Tensor) -> tf.RaggedTensor:
        chars = tf.strings.bytes_split(strings)  # one-byte strings
        values = tf.io.decode_raw(chars.flat_values, tf.uint8, fixed_length=1)[:, 0]
        return chars.with_flat_values(tf.cast(values, tf.int32) + self.num_reserved_ids)
