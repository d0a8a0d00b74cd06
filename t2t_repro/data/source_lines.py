"""The one normalisation of a source line before translation, for every decoding path.

``t2t-decoder`` (file or interactive) and the exported SavedModel translate a line only
after: (1) decoding it as UTF-8, each invalid byte sequence becoming U+FFFD (Python's and
ICU's shared "maximal subpart" rule); (2) stripping, at both ends, every character Python's
``str.isspace`` counts as whitespace (ASCII space, tab, CR, LF, VT, FF, the separators
U+001C-U+001F, NEL, NBSP, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)
and the byte-order mark U+FEFF. Whitespace inside the line is kept: the tokenizer handles it.
Same line in, same translation out, whichever path it takes.
"""

from __future__ import annotations

from t2t_repro.data.text_files import decode_utf8

WHITESPACE = (
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680]
    + list(range(0x2000, 0x200B))
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)
BYTE_ORDER_MARK = 0xFEFF
STRIPPED = "".join(map(chr, WHITESPACE + [BYTE_ORDER_MARK]))
# The same set for RE2 (tf.strings.regex_replace), which the exported graph uses.
_RE2_CLASS = "[" + "".join(f"\\x{{{c:04X}}}" for c in WHITESPACE + [BYTE_ORDER_MARK]) + "]"
RE2_STRIP_PATTERN = f"^{_RE2_CLASS}+|{_RE2_CLASS}+$"


def normalize_source_line(line: str | bytes) -> str:
    """A raw line (bytes or text) as every decoding path translates it."""
    text = decode_utf8(line) if isinstance(line, (bytes, bytearray)) else line
    return text.strip(STRIPPED)


def normalize_source_lines_in_graph(sources):
    """``normalize_source_line`` for a string tensor, in TensorFlow ops (for SavedModels)."""
    import tensorflow as tf

    text = tf.strings.unicode_transcode(
        sources, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )
    return tf.strings.regex_replace(text, RE2_STRIP_PATTERN, "")
