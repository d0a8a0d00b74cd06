"""T2T's invertible tokenizer (``tensor2tensor/data_generators/tokenizer.py``): exact token lists
and round trips."""

from __future__ import annotations

import collections
import gzip
import random
import sys
import unicodedata
from pathlib import Path

import pytest

from t2t_repro.text_encoding import tokenizer
from tests import reference_subword as ref  # T2T's algorithm, written plainly

REPO = Path(__file__).resolve().parents[1]
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"

HOSTILE = [
    "",
    " ",
    "  ",
    "   ",
    "a",
    "a ",
    " a",
    " a ",
    "a  b",
    "a   b",
    "a b",
    " a b ",
    "  a  b  ",
    "_",
    "__",
    "a_b",
    "_a_",
    "\\",
    "\\\\",
    "a\\b",
    "\\u",
    "\\u005f",
    "\\95;",
    "\\95",
    "x\\u;y",
    "0",
    "123 456",
    "3.14",
    "1,000,000",
    "a1b2",
    "٣٤٥",
    "Ⅻ",
    "½",
    "😀",
    "a😀b",
    "😀 😀",
    "👍🏽",
    "e\u0301",
    "ß",
    "İstanbul",
    "Привет мир",
    "日本語のテキスト",
    "中文 字符",
    "مرحبا بالعالم",
    "שלום",
    "ελληνικά",
    "한국어",
    "ﬁ ligature",
    "\u00a0nbsp\u00a0",
    "\t",
    "a\tb",
    "\n",
    "a\nb",
    "a \n b",
    "\r\n",
    "\x00",
    "a\x00b",
    "\x07\x1b[0m",
    "\u200b",
    "\u2028",
    "\ufeffBOM",
    "\ud800",
    "a\udfffb",
    "\U0010ffff",
    "\U000e0001",
    "Dude - that's so cool.",
    '"Quoted," he said -- (really?)',
    "end. ",
    " start",
    "multiple   spaces   here",
    "tab\tand space",
    "<pad> <EOS>",
    "<pad>_",
    "'quote'",
]


def multi30k_lines(lang: str, n: int = 2000) -> list[str]:
    path = MULTI30K / f"train.{lang}.gz"
    if not path.exists():
        pytest.skip(f"{path} absent (../shared/data not available)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    return lines[:n]


def random_strings(n: int = 3000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    pool = list("ab Z9_\\ u;-.,'\"\t\n") + ["  ", "é", "ß", "😀", "\u0301", "日", "\x00", "½"]
    return ["".join(rng.choice(pool) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def test_t2t_docstring_example():
    assert tokenizer.encode("Dude - that's so cool.") == [
        "Dude",
        " - ",
        "that",
        "'",
        "s",
        "so",
        "cool",
        ".",
    ]


@pytest.mark.parametrize(
    "text,tokens",
    [
        ("", []),
        (" ", [" "]),
        ("  ", ["  "]),
        ("a ", ["a", " "]),  # a single space at the end is kept
        (" a", [" ", "a"]),  # ... and at the start
        ("a b", ["a", "b"]),  # ... and dropped in between
        ("a  b", ["a", "  ", "b"]),
        ("a_b", ["a", "_", "b"]),  # "_" is not alphanumeric
        ("x1 2y", ["x1", "2y"]),
        ("a\nb", ["a", "\n", "b"]),
        ("a. b", ["a", ". ", "b"]),
    ],
)
def test_edge_cases(text, tokens):
    assert tokenizer.encode(text) == tokens
    assert tokenizer.decode(tokens) == text


def test_alphanumeric_class_is_unicode_L_or_N():
    # The fast regex class must agree with T2T's definition on every code point.
    bad = [
        cp
        for cp in range(sys.maxunicode + 1)
        if tokenizer.is_alnum_char(chr(cp)) != (unicodedata.category(chr(cp))[0] in "LN")
    ]
    assert bad == []
    # The encoder's chunk fast path relies on str.isalnum() meaning the same.
    assert all(
        chr(cp).isalnum() == (unicodedata.category(chr(cp))[0] in "LN")
        for cp in range(sys.maxunicode + 1)
    )


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_multi30k_matches_reference_and_round_trips(lang):
    for line in multi30k_lines(lang):
        toks = tokenizer.encode(line)
        assert toks == ref.tok_encode(line), line
        assert tokenizer.decode(toks) == line


def test_hostile_and_random_strings():
    for text in HOSTILE + random_strings():
        toks = tokenizer.encode(text)
        assert toks == ref.tok_encode(text), repr(text)
        assert all(toks), repr(text)
        assert tokenizer.decode(toks) == text, repr(text)
        if toks:
            assert tokenizer.decode(toks) == ref.tok_decode(toks)


def test_count_tokens():
    lines = HOSTILE + ["the cat", "the dog", "the cat sat."]
    expected = collections.Counter()
    for line in lines:
        expected.update(ref.tok_encode(line))
    got = tokenizer.count_tokens(lines)
    assert got == expected
    small = tokenizer.count_tokens(["the cat", "the dog", "the cat sat."])
    assert small == {"the": 3, "cat": 2, "dog": 1, "sat": 1, ".": 1}
