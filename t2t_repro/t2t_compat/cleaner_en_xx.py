"""``tensor2tensor.data_generators.cleaner_en_xx`` for a T2T usr_dir: T2T 1.15.7's pattern-based
cleaner of (English, other) sentence pairs and its ParaCrawl tmx reader, so a problem's
``datatypes_to_clean`` and tmx corpora give the pairs T2T's give (``translate.py``,
``compile_data``).

Every rule looks at the English member only: a pair is dropped when it does not start and end
like a sentence or shows noise (labels, quotes, copyright, brackets...). A pair whose members
both split into the same number (> 1) of sentences gives its sentences as pairs, each filtered
again. The patterns are T2T's, under Python 3's ``re`` (Unicode ``\\w``, ``\\d``, ``\\s``), as
T2T 1.15.7 runs on Python 3. One difference: T2T pairs the sentences with ``itertools.izip``,
which Python 3 has not (T2T 1.15.7 raises ``AttributeError`` there); they are paired here as
``izip`` pairs them on Python 2, T2T's meaning.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator

from t2t_repro.t2t_compat.text_encoder import native_to_unicode

__all__ = ["clean_en_xx_pairs", "paracrawl_v3_pairs"]

_QUOTES = '"“”'  # the double quotes T2T's patterns know
_SINGLES = "'‘’"

# cleaner_en_xx.py, _RE_GOOD_S_START and _RE_GOOD_S_END: an English sentence starts with an
# ASCII capital (after an optional double quote) and ends with a word character, one of
# ".?!" and an optional closing quote.
_STARTS_WELL = re.compile(rf"^[{_QUOTES}]?[A-Z]")
_ENDS_WELL = re.compile(r'\w[.?!]["”]?$')

# cleaner_en_xx.py, _regex_filter: any match drops the English sentence (T2T's _RE_LABEL_COLON,
# _RE_DIGIT_SPACE_DIGIT, _RE_DQ_ONE, _RE_DQ_INITIAL, _RE_DQ_FINAL, _RE_DQ_LINE, _RE_DQ_MANY,
# _RE_SQ_MANY, _RE_CHARS_QQ, _RE_SPACE_PUNCT_SPACE, _RE_COPYRIGHT, _RE_UNMATCHED_PAREN_LEFT,
# _RE_UNMATCHED_PAREN_RIGHT, _RE_TAGLINE_CITY, _RE_CHARS_UPPER_UNDERSCORE, in its order; its
# _RE_ALL_CAP_WORDS is never used).
_NOISE = tuple(
    re.compile(pattern)
    for pattern in (
        r"^\w+\.?( \w+)?: ",  # a label: "Note: ...", "Fig. 2: ..."
        r"\d +\d",  # digits split by spaces
        rf"^[^{_QUOTES}]*[{_QUOTES}][^{_QUOTES}]*$",  # a single double quote
        rf"^[{_QUOTES}]([^{_QUOTES}]+)$",
        rf"^[^{_QUOTES}]+[{_QUOTES}]$",
        rf"^[{_QUOTES}].*[{_QUOTES}]$",  # the whole line quoted
        rf"([{_QUOTES}].*){{3,}}",  # three or more double quotes
        rf"([{_SINGLES}][^st].*){{3,}}",  # three single quotes not of 's / 't
        rf"[{_QUOTES}{_SINGLES}]\s*[{_QUOTES}{_SINGLES}]",  # two quotes in a row
        rf"\s[{_QUOTES}{_SINGLES},:;]\s",  # a lone quote or punctuation mark
        r"©|^Copyright|^\(C\)",
        r"[(][^)]*$",  # "(" never closed
        r"^[^(]*[)]",  # ")" never opened
        r"^[A-Z]{2,}(\s+[A-Z]+)*\s+-",  # a news tagline: "PARIS -"
        r"^[A-Z]+[a-z]*_",  # an identifier: "FOO_BAR"
    )
)

# cleaner_en_xx.py, _split_sentences: where a sentence ends and a capital starts the next.
_EN_BREAK = re.compile(r"(\w[A-Z]|[0-9a-z])([.!?]) ([A-Z])")
_XX_BREAK = re.compile(r"([^0-9][.!?]) ([A-Z])")
_MARK = "__|__"

# cleaner_en_xx.py, _raw_sentences: a <seg> line of a ParaCrawl tmx, and the HTML entities
# decoded in it, in T2T's order ("& amp;" too).
_SEG_LINE = re.compile(r" +<seg>(.*)</seg>$")
_ENTITIES = (
    (re.compile(r"&amp;"), "&"),
    (re.compile(r"& ?amp;"), "&"),
    (re.compile(r"& ?apos;"), "'"),
    (re.compile(r"& ?quot;"), '"'),
    (re.compile(r"& ?lt;"), "<"),
    (re.compile(r"& ?gt;"), ">"),
)


def _regex_filter(sentence: str) -> bool:
    """True when the English ``sentence`` is to be dropped (T2T's ``_regex_filter``)."""
    if not _STARTS_WELL.search(sentence) or not _ENDS_WELL.search(sentence):
        return True
    return any(pattern.search(sentence) for pattern in _NOISE)


def _split_sentences(s1, s2) -> tuple[list[str], list[str]]:
    """Each member's sentences (T2T's ``_split_sentences``): bytes are read as UTF-8, and an
    ``__|__`` already in the text splits it too, as in T2T."""
    s1 = _EN_BREAK.sub(rf"\1\2{_MARK}\3", native_to_unicode(s1))
    s2 = _XX_BREAK.sub(rf"\1{_MARK}\2", native_to_unicode(s2))
    return s1.split(_MARK), s2.split(_MARK)


def clean_en_xx_pairs(en_xx_pairs: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """The pairs of ``en_xx_pairs`` whose English looks like clean sentences, a pair of several
    sentences given sentence by sentence (T2T's ``clean_en_xx_pairs``; lazily, as T2T's)."""
    for s1, s2 in en_xx_pairs:
        if _regex_filter(s1):
            continue
        en, xx = _split_sentences(s1, s2)
        if len(en) != len(xx):
            continue  # T2T drops a pair whose members split differently
        if len(en) == 1:
            yield s1, s2  # as given, not decoded
            continue
        for sentence_en, sentence_xx in zip(en, xx, strict=True):
            if not _regex_filter(sentence_en):
                yield sentence_en, sentence_xx


def _raw_sentences(paracrawl_file: Iterable) -> Iterator[str]:
    """The text of each ``<seg>`` line, entities decoded (T2T's ``_raw_sentences``). T2T's
    lines are UTF-8 bytes (a gzipped tmx); a line given as text is taken as decoded."""
    for line in paracrawl_file:
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        found = _SEG_LINE.match(line)
        if found:
            text = found.group(1)
            for pattern, replacement in _ENTITIES:
                text = pattern.sub(replacement, text)
            yield text


def paracrawl_v3_pairs(paracrawl_file: Iterable) -> Iterator[tuple[str, str]]:
    """(English, other) pairs of a ParaCrawl v3 tmx, its ``<seg>`` lines taken two by two
    (T2T's ``paracrawl_v3_pairs``); a pair with an empty member is skipped, and an odd last
    segment is reported on stderr (T2T logs it as an error) and dropped."""
    segments = _raw_sentences(paracrawl_file)
    for s_en in segments:
        s_xx = next(segments, None)
        if s_xx is None:
            print(
                f"Unmatched final sentence while reading in sentence pairs: [{s_en}]",
                file=sys.stderr,
            )
        elif s_en and s_xx:
            yield s_en, s_xx
