"""T2T's token escaping (``tensor2tensor/data_generators/text_encoder.py``, ``_escape_token``
and ``_unescape_token``), shared by the subword encoder and its vocabulary builder."""

from __future__ import annotations

import re

# The alphabet always contains the characters escapes are written with.
ESCAPE_CHARS = frozenset("\\_u;0123456789")
_UNESCAPE_RE = re.compile(r"\\u|\\\\|\\([0-9]+);")
_UNDEFINED_CHAR = "\u3013"


def escape_token(token: str, alphabet) -> str:
    """T2T's ``_escape_token``: escape ``\\`` and ``_``, replace characters outside
    ``alphabet`` (and newlines) by ``\\<decimal>;`` and append the ``_`` end marker."""
    if not isinstance(token, str):
        raise ValueError(f"Expected string type for token, got {type(token)}")
    token = token.replace("\\", "\\\\").replace("_", "\\u")
    if "\n" in token or not alphabet.issuperset(token):
        token = "".join(c if c in alphabet and c != "\n" else f"\\{ord(c)};" for c in token)
    return token + "_"


def _unescape_match(m: re.Match) -> str:
    code = m.group(1)
    if code is None:
        return "_" if m.group(0) == "\\u" else "\\"
    try:
        return chr(int(code))
    except (ValueError, OverflowError):
        return _UNDEFINED_CHAR


def unescape_token(escaped_token: str) -> str:
    """T2T's ``_unescape_token`` (invalid code points become U+3013)."""
    if escaped_token.endswith("_"):
        escaped_token = escaped_token[:-1]
    if "\\" not in escaped_token:
        return escaped_token
    return _UNESCAPE_RE.sub(_unescape_match, escaped_token)
