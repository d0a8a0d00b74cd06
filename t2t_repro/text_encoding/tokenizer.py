"""T2T's invertible tokenizer (``encode`` / ``decode``), with the same output as
``tensor2tensor/data_generators/tokenizer.py`` and a regex fast path.

A character is alphanumeric when its Unicode category (``unicodedata``, i.e. the Unicode
version of the running Python, as in T2T) starts with ``L`` or ``N``. The text is split at
every boundary between alphanumeric and non-alphanumeric characters; a run that is exactly
one space is dropped unless it is the first or the last run. ``decode`` puts one space back
between two consecutive tokens that both start with an alphanumeric character, so
``decode(encode(s)) == s`` for every string ``s``.

    >>> encode("Dude - that's so cool.")
    ['Dude', ' - ', 'that', "'", 's', 'so', 'cool', '.']
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable

# ``re``'s ``\w`` (str patterns) is ``str.isalnum()`` plus "_"; with CPython's Unicode
# database ``str.isalnum()`` holds exactly for the characters of category L* or N*, so
# ``[^\W_]`` is T2T's alphanumeric set (tests/test_tokenizer.py checks every code point
# against ``unicodedata.category``). It is also several times faster in ``re`` than an
# explicit class of the 700+ ranges.
ALNUM_CLASS = r"[^\W_]"
_NON_ALNUM = r"[\W_]"
# Alternating maximal runs of alphanumeric / non-alphanumeric characters.
_RUN_RE = re.compile(f"{ALNUM_CLASS}+|{_NON_ALNUM}+")
_IS_ALNUM_RE = re.compile(ALNUM_CLASS)
_runs = _RUN_RE.findall
_alnum_start = _IS_ALNUM_RE.match


def is_alnum_char(c: str) -> bool:
    """True when ``c`` (one character) is alphanumeric in T2T's sense."""
    return _alnum_start(c) is not None


def runs(text: str) -> list[str]:
    """The alternating alphanumeric / non-alphanumeric runs of ``text`` (no dropping)."""
    return _runs(text)


def encode(text: str) -> list[str]:
    """Split ``text`` into tokens exactly as ``tensor2tensor.data_generators.tokenizer.encode``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    toks = _runs(text)
    n = len(toks)
    if n > 2 and " " in toks:
        last = toks[-1]
        toks = [toks[0]] + [t for t in toks[1:-1] if t != " "] + [last]
    return toks


def decode(tokens: Iterable[str]) -> str:
    """Inverse of :func:`encode`: one space between consecutive alphanumeric-initial tokens.

    (T2T raises IndexError on an empty token; here an empty token contributes nothing and
    counts as non-alphanumeric.)
    """
    parts: list[str] = []
    prev_alnum = False
    for tok in tokens:
        alnum = _alnum_start(tok) is not None
        if alnum and prev_alnum:
            parts.append(" ")
        parts.append(tok)
        prev_alnum = alnum
    return "".join(parts)


# A space followed by a non-alphanumeric character (or another space).
_SPACE_THEN_NON_ALNUM = re.compile(r" [\W_]")


def count_tokens(lines: Iterable[str]) -> collections.Counter:
    """Token counts of ``lines`` (each line tokenized as given, as T2T's
    ``build_from_generator`` does); equal to summing ``Counter(encode(line))``.

    Fast path: in a line without leading, trailing or double spaces in which every space
    is followed by an alphanumeric character, the tokens are those of the space-separated
    chunks ("chunk " for all but the last), so the chunks are counted and each distinct
    chunk is tokenized once.
    """
    before_space: collections.Counter = collections.Counter()
    at_end: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    bad = _SPACE_THEN_NON_ALNUM.search
    for line in lines:
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        if line[:1] == " " or line[-1:] == " " or bad(line) is not None:
            counts.update(encode(line))
            continue
        chunks = line.split(" ")
        at_end[chunks.pop()] += 1
        before_space.update(chunks)
    for chunk, n in before_space.items():
        toks = _runs(chunk + " ")
        if toks[-1] == " ":
            toks.pop()
        for tok in toks:
            counts[tok] += n
    for chunk, n in at_end.items():
        for tok in _runs(chunk):
            counts[tok] += n
    return counts
