"""T2T's subword encode/decode as TensorFlow ops, for models exported with their tokeniser.

Same ids and text as ``SubwordTextEncoder`` (tested side by side), built from core
``tf.strings`` ops plus tensorflow-text's regex split and greedy longest-match WordPiece:

- tokenize: maximal runs of alphanumeric (Unicode L*/N*) and of other characters; a single
  space between two tokens is dropped (it is implied), one at the start or end is kept;
- escape: ``\\`` -> ``\\\\``, ``_`` -> ``\\u``, a character outside the alphabet (or a newline)
  -> ``\\<code point>;``, then ``_`` appended;
- segment: greedy longest prefix present in the vocabulary, i.e. WordPiece with an empty
  continuation marker;
- decode: join the subtoken strings, split at ``_``, unescape each piece, and put a space
  between two neighbouring tokens that both start with an alphanumeric character.

The vocabulary is read from a plain one-subtoken-per-line file (``asset_path``), which an
export stores as a SavedModel asset. The alphabet is baked into the graph as constants.
Caveat: RE2's Unicode tables (TensorFlow's) may classify characters added in a newer Unicode
version than Python's ``unicodedata`` differently; both are Unicode 15-era for common text.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops.regex_split_ops import gen_regex_split_ops

from t2t_repro.atomic_write import write_text_atomically

ALNUM_CLASS = r"[\p{L}\p{N}]"
RUNS_PATTERN = r"[\p{L}\p{N}]+|[^\p{L}\p{N}]+"
ESCAPE_PATTERN = r"\\u|\\\\|\\[0-9]+;"
UNDEFINED_CHAR = 0x3013  # What T2T substitutes for an unparsable escape.
MAX_CODE_POINT = 0x10FFFF


def write_plain_vocab(subtokens: list[str], path: str) -> None:
    """One subtoken per line, unquoted: the format ``TextFileInitializer`` reads."""
    bad = [s for s in subtokens if "\n" in s or "\r" in s]
    if bad:
        raise ValueError(f"subtokens containing line breaks cannot be exported: {bad[:3]!r}")
    seen: set[str] = set()
    duplicates = [s for s in subtokens if s in seen or seen.add(s)]
    if duplicates:
        raise ValueError(
            f"the vocabulary has duplicate subtokens {duplicates[:3]!r}; "
            "export needs each subtoken once"
        )
    write_text_atomically(path, "".join(s + "\n" for s in subtokens), newline="\n")


def regex_split(strings: tf.Tensor, pattern: str) -> tf.RaggedTensor:
    """``tf_text.regex_split(strings, pattern, pattern)`` for strings [N]: the same op, without
    the wrapper's checks of the op's own row splits (18 asserts a trace, each a cond: they
    made up most of the export's functions, its load and its first calls)."""
    keep = f"({pattern})"
    tokens, _, _, row_splits = gen_regex_split_ops.regex_split_with_offsets(strings, keep, keep)
    return tf.RaggedTensor.from_row_splits(tokens, row_splits, validate=False)


class GraphSubwordEncoder(tf.Module):
    """``encode(strings [B]) -> ragged ids [B, None]``; ``decode(ids [B, L]) -> strings [B]``."""

    def __init__(self, asset_path, alphabet, name: str | None = None) -> None:
        super().__init__(name=name)
        whole_line = tf.lookup.TextFileIndex.WHOLE_LINE
        line_number = tf.lookup.TextFileIndex.LINE_NUMBER
        self.string_to_id = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(asset_path, tf.string, whole_line, tf.int64, line_number),
            default_value=-1,
        )
        self.id_to_string = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(asset_path, tf.int64, line_number, tf.string, whole_line),
            default_value="",
        )
        codes = sorted(ord(c) for c in alphabet if c != "\n")
        self.alphabet = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(codes, tf.int32), tf.ones([len(codes)], tf.int32)
            ),
            default_value=0,
        )
        self.wordpiece = tf_text.WordpieceTokenizer(
            self.string_to_id,
            suffix_indicator="",
            max_bytes_per_word=1 << 20,
            token_out_type=tf.int64,
            unknown_token=None,
        )

    # -- encoding -------------------------------------------------------------------------
    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        runs = regex_split(strings, RUNS_PATTERN)
        # On the flat values: ragged broadcasting would add shape checks to every comparison
        # (most of the export's tracing time).
        lengths = runs.row_lengths()
        position = tf.ragged.range(lengths).flat_values
        last = tf.repeat(lengths - 1, lengths)
        keep = (runs.flat_values != " ") | (position == 0) | (position == last)
        return tf.ragged.boolean_mask(runs, runs.with_flat_values(keep))

    def escape(self, tokens: tf.Tensor) -> tf.Tensor:
        """Flat tokens [N] -> escaped tokens [N], each ending in ``_``."""
        tokens = tf.strings.regex_replace(tokens, r"\\", r"\\\\")
        tokens = tf.strings.regex_replace(tokens, "_", r"\\u")
        chars = tf.strings.unicode_split(tokens, "UTF-8", errors="replace")
        codes = tf.strings.unicode_decode(tokens, "UTF-8", errors="replace")
        known = tf.ragged.map_flat_values(self.alphabet.lookup, codes) > 0
        written = tf.strings.join(["\\", tf.strings.as_string(codes.flat_values), ";"])
        flat = tf.where(known.flat_values, chars.flat_values, written)
        return tf.strings.reduce_join(chars.with_flat_values(flat), axis=1) + "_"

    def encode(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """Subtoken ids of each string, int32 (no EOS)."""
        tokens = self.tokenize(strings)
        escaped = tokens.with_flat_values(self.escape(tokens.flat_values))
        ids = self.wordpiece.tokenize(escaped).merge_dims(1, 2)
        return tf.cast(ids, tf.int32)

    # -- decoding -------------------------------------------------------------------------
    def unescape(self, pieces: tf.Tensor) -> tf.Tensor:
        """Flat escaped pieces [N] (no ``_``) -> text [N]."""
        parts = regex_split(pieces, ESCAPE_PATTERN)
        flat = parts.flat_values
        is_code = tf.strings.regex_full_match(flat, r"\\[0-9]+;")
        digits = tf.strings.regex_replace(flat, r"[^0-9]", "")
        digits = tf.where(is_code & (tf.strings.length(digits) < 8), digits, "-1")
        code = tf.strings.to_number(digits, tf.int64)
        valid = (code >= 0) & (code <= MAX_CODE_POINT) & ~((code >= 0xD800) & (code <= 0xDFFF))
        code = tf.cast(tf.where(valid, code, UNDEFINED_CHAR), tf.int32)
        decoded = tf.strings.unicode_encode(tf.expand_dims(code, 1), "UTF-8")
        text = tf.where(is_code, decoded, flat)
        text = tf.where(flat == r"\u", "_", text)
        text = tf.where(flat == "\\\\", "\\", text)
        return tf.strings.reduce_join(parts.with_flat_values(text), axis=1)

    def detokenize(self, tokens: tf.RaggedTensor) -> tf.Tensor:
        starts_alnum = tf.strings.regex_full_match(tokens.flat_values, "(?s)" + ALNUM_CLASS + ".*")
        previous = tf.concat([[False], starts_alnum[:-1]], axis=0)
        first = tf.ragged.range(tokens.row_lengths()).flat_values == 0
        space = starts_alnum & previous & ~first
        joined = tf.where(space, " " + tokens.flat_values, tokens.flat_values)
        return tf.strings.reduce_join(tokens.with_flat_values(joined), axis=1)

    def decode(self, ids: tf.RaggedTensor) -> tf.Tensor:
        """Text of each row of ids (every id included; cut at EOS before calling)."""
        strings = tf.ragged.map_flat_values(self.id_to_string.lookup, tf.cast(ids, tf.int64))
        pieces = tf.strings.split(tf.strings.reduce_join(strings, axis=1), "_")
        pieces = tf.ragged.boolean_mask(pieces, pieces != "")
        tokens = pieces.with_flat_values(self.unescape(pieces.flat_values))
        tokens = tf.ragged.boolean_mask(tokens, tokens != "")
        return self.detokenize(tokens)
