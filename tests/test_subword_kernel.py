"""The compiled batch encoder and substring interning (t2t_repro/text_encoding/subword_kernel.py)
against T2T's algorithm (tests/reference_subword.py) on inputs that exercise its internals: the
token cache growing and keys that agree on the first 9 code points, escapes that lengthen the id
output past its first allocation, duplicate and empty subtokens, an untokenized empty text and a
character no subtoken starts with. Runs without ../shared/data."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from t2t_repro.text_encoding.compiled_vocabulary import CompiledVocabulary, intern_substrings
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder
from tests import reference_subword as ref

ESCAPES = list("\\_u;0123456789")


def encoders(tmp_path: Path, subtokens: list[str]):
    path = tmp_path / "v.subwords"
    path.write_text("".join(f"'{s}'\n" for s in subtokens), encoding="utf-8")
    return SubwordTextEncoder(str(path)), ref.ReferenceSubwordEncoder(str(path))


def small_vocab() -> list[str]:
    words = [
        "the_",
        "cat_",
        "sat_",
        "abc",
        "abcdefghi",
        "abcdefghij_",
        "ab",
        "de",
        "fgh_",
        " - ",
        ". ",
        "é_",
    ]
    reserved = ["<pad>_", "<EOS>_"]
    chars = sorted(set("".join(reserved + words) + "abcdefghijXY") - set(ESCAPES))
    return reserved + words + chars + ESCAPES


def test_many_distinct_tokens_and_long_shared_prefixes(tmp_path):
    ours, theirs = encoders(tmp_path, small_vocab())
    rng = random.Random(7)
    letters = "abcdefghijXY"
    # ~20k distinct words (the cache starts at 4,096 rows and grows several times), long
    # words that agree on their first 9 code points and length (same key words), and
    # repeats so that most tokens are cache hits.
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 14))) for _ in range(20000)]
    words += [f"abcdefghi{a}{b}" for a in letters for b in letters]
    texts = []
    for _ in range(6000):
        texts.append(
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
            + rng.choice(["", ".", " - x", "  ", " é"])
        )
    got = ours.encode_batch(texts)
    assert got == [theirs.encode(t) for t in texts]
    assert ours.encode_batch(list(reversed(texts))) == list(reversed(got))


def test_hostile_and_random_strings_without_shared_data(tmp_path):
    from tests.test_tokenizer import HOSTILE, random_strings

    texts = HOSTILE + random_strings(3000, seed=5) + ["a" * 25 + str(i) * 3 for i in range(300)]
    # Most of their characters are outside this vocabulary's alphabet (escaped as \<n>;).
    vocab = small_vocab() + ["a" * 9 + "x", "aaaaaaaaaaaaaaaa_", "x", "  "]
    ours, theirs = encoders(tmp_path, vocab)
    assert ours.encode_batch(texts) == [theirs.encode(t) for t in texts]
    for t in texts[:200]:
        assert ours.encode(t) == theirs.encode(t), repr(t)
        assert ours.encode_without_tokenizing(t) == theirs.token_ids(t), repr(t)


def test_escapes_longer_than_the_first_output_buffer(tmp_path):
    ours, theirs = encoders(tmp_path, small_vocab())
    # Characters outside the alphabet become "\<decimal>;", one id per code point here.
    texts = ["😀" * 500, "x" + "\U0010ffff" * 300 + "_\\" * 50, "a"]
    got = ours.encode_batch(texts)
    assert got == [theirs.encode(t) for t in texts]
    assert len(got[0]) == 500 * len("\\128512;") + 1


def test_untokenized_texts_match_token_ids(tmp_path):
    ours, theirs = encoders(tmp_path, small_vocab())
    for text in ["", " ", "the cat", "abcdefghij", "a_b\\c", "😀", "\n"]:
        assert ours.encode_without_tokenizing(text) == theirs.token_ids(text), repr(text)
    assert ours.encode_without_tokenizing("") == [ours.all_subtoken_strings.index("_")]


def test_duplicate_subtoken_keeps_the_last_id_and_empty_ones_are_skipped():
    subtokens = ["<pad>_", "<EOS>_", "ab_", "", "a", "b", "_", "ab_"]
    vocab = CompiledVocabulary(subtokens, set("ab_") | set(ESCAPES))
    ids, failed = vocab.encode(["ab", "ba", ""])
    assert failed == -1
    assert ids == [[7], [5, 4, 6], []]


def test_unencodable_character_is_reported(tmp_path):
    # "b" is in the alphabet (it occurs in "ab_") but no subtoken starts with "b" alone.
    subtokens = ["<pad>_", "<EOS>_", "ab_", "a", "_"] + ESCAPES
    vocab = CompiledVocabulary(subtokens, set("ab_") | set(ESCAPES))
    ids, failed = vocab.encode(["ab", "a b", "ab"])
    assert failed == 1 and ids == [[2]]
    ours, theirs = encoders(tmp_path, subtokens)
    with pytest.raises(
        ValueError, match=r"cannot encode 'a b': .* single-character subtoken: \['b'\]"
    ):
        ours.encode_batch(["ab", "a b"])
    with pytest.raises(AssertionError):  # T2T's own failure on the same input
        theirs.encode("a b")


def test_non_text_input_is_an_error(tmp_path):
    ours, _ = encoders(tmp_path, small_vocab())
    assert ours.encode_batch([b"the cat", "the cat"]) == [ours.encode("the cat")] * 2
    with pytest.raises(ValueError, match="expected str or UTF-8 bytes"):
        ours.encode_batch(["the", 5])
    assert ours.encode_batch(iter(["the", "cat"])) == [ours.encode("the"), ours.encode("cat")]
    assert ours.encode_batch([]) == []


def test_intern_substrings_equals_a_dict():
    rng = random.Random(3)
    text = "".join(rng.choice("abcab\\_😀\ud800é") for _ in range(3000)) + "abcdefghijkl" * 40
    starts = [rng.randrange(len(text)) for _ in range(30000)]
    lengths = [rng.randint(0, min(14, len(text) - s)) for s in starts]
    ids, strings = intern_substrings(text, np.array(starts), np.array(lengths))
    table: dict[str, int] = {}
    expected = [
        table.setdefault(text[s : s + n], len(table)) for s, n in zip(starts, lengths, strict=True)
    ]
    assert ids.tolist() == expected
    assert strings == list(table)
