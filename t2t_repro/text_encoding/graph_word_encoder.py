"""In-graph ``WordTextEncoder.encode`` for SavedModel export: strings -> word ids.

A word in the vocabulary is its id; any other word is its shape class (``word_signature``,
computed here with the same Unicode-category tests and suffix patterns as regular
expressions), or ``<UNK>`` if the class is not in the vocabulary either.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from t2t_repro.text_encoding.token_encoder import UNK_ID
from t2t_repro.text_encoding.word_encoder import NO_SUFFIX_PATTERN, SUFFIX_PATTERNS, SUFFIXES


def _matches(words: tf.Tensor, pattern: str) -> tf.Tensor:
    return tf.strings.regex_full_match(words, pattern)


def graph_word_signature(words: tf.Tensor) -> tf.Tensor:
    """``word_signature`` of every string in ``words`` (any shape)."""
    has_letter = _matches(words, r"(?s).*\p{L}.*")
    caps = has_letter & ~_matches(words, r"(?s).*[\p{Ll}\p{Lt}\p{Lm}\p{Lo}].*")
    cap = ~caps & _matches(words, r"(?s)\p{Lu}.*")
    mixed = ~caps & ~cap & _matches(words, r"(?s).*\p{Lu}.*")
    suffix = tf.fill(tf.shape(words), "")
    for name, pattern in reversed(list(zip(SUFFIXES, SUFFIX_PATTERNS, strict=True))):
        suffix = tf.where(_matches(words, pattern), "-" + name, suffix)  # first one wins
    suffix = tf.where(_matches(words, NO_SUFFIX_PATTERN), "", suffix)
    parts = [
        tf.where(caps, "-CAPS", tf.where(cap, "-Cap", tf.where(mixed, "-mixed", ""))),
        tf.where(_matches(words, r"(?s).*\p{Nd}.*"), "-num", ""),
        tf.where(_matches(words, r"(?s).*-.*"), "-dash", ""),
        tf.where(has_letter, "", "-sym"),
        suffix,
    ]
    return tf.strings.join(["<unk", *parts, ">"])


class GraphWordEncoder(tf.Module):
    """``encode(strings [B]) -> RaggedTensor [B, (words)]`` of int32 ids."""

    def __init__(self, tokens: Sequence[str], name: str | None = None) -> None:
        super().__init__(name=name)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(list(tokens)), tf.range(len(tokens), dtype=tf.int64)
            ),
            default_value=-1,
        )

    def encode(self, strings: tf.Tensor) -> tf.RaggedTensor:
        words = tf.strings.split(strings)
        flat = words.flat_values
        ids = self.table.lookup(flat)
        by_class = self.table.lookup(graph_word_signature(flat))
        ids = tf.where(ids >= 0, ids, tf.where(by_class >= 0, by_class, UNK_ID))
        return words.with_flat_values(tf.cast(ids, tf.int32))
