"""SubwordTextEncoder: T2T vocabulary files, id-for-id equality with T2T's algorithm
(tests/reference_subword.py), round trips, vocabulary building, file handling."""

from __future__ import annotations

import collections
import glob
import gzip
import json
from pathlib import Path

import pytest

from t2t_repro.text_encoding import reserved_tokens, tokenizer
from t2t_repro.text_encoding.escaping import ESCAPE_CHARS, escape_token, unescape_token
from t2t_repro.text_encoding.reserved_tokens import EOS_ID, PAD_ID
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder, VocabFileError
from tests import reference_subword as ref
from tests.test_tokenizer import HOSTILE, random_strings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
MULTI30K = SHARED / "multi30k"
VOCAB_32K = SHARED / "t2t" / "vocab.translate_ende_wmt32k.32768.subwords"
TRAX_DIR = SHARED / "t2t" / "trax_wmt32k"
TRAX_VOCAB = TRAX_DIR / "vocab.translate_ende_wmt32k.32768.subwords"

needs_vocab = pytest.mark.skipif(not VOCAB_32K.exists(), reason="../shared/data/t2t absent")
needs_trax = pytest.mark.skipif(not TRAX_VOCAB.exists(), reason="../shared/data/t2t absent")

# Text with characters outside the 32k vocabulary's alphabet, underscores, backslashes.
EXTRA_HOSTILE = [
    "ﬀ Ǆ ℵ ∮ ⌘ ☃ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "snake_case_name",
    "C:\\path\\to\\file",
    "\\8364; literal",
    "100\u2009000",
    "mixed日本語and English",
    "\x7f\x80\x9f",
]


def lines(lang: str, n: int | None = 2000, split: str = "train") -> list[str]:
    path = MULTI30K / f"{split}.{lang}.gz"
    if not path.exists():
        pytest.skip(f"{path} absent (../shared/data not available)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        out = f.read().split("\n")
    if out and out[-1] == "":
        out.pop()
    return out[:n] if n else out


@pytest.fixture(scope="module")
def enc32k():
    if not VOCAB_32K.exists():
        pytest.skip("../shared/data/t2t absent")
    return SubwordTextEncoder(str(VOCAB_32K))


@pytest.fixture(scope="module")
def ref32k():
    if not VOCAB_32K.exists():
        pytest.skip("../shared/data/t2t absent")
    return ref.ReferenceSubwordEncoder(str(VOCAB_32K))


# ----------------------------------------------------------------------------- constants


def test_constants():
    assert reserved_tokens.PAD == "<pad>" and reserved_tokens.EOS == "<EOS>"
    assert reserved_tokens.RESERVED_TOKENS == ["<pad>", "<EOS>"]
    assert PAD_ID == 0 and EOS_ID == 1


# ----------------------------------------------------------------------------- escaping


def test_escape_and_unescape():
    alphabet = set("abc") | ESCAPE_CHARS
    assert escape_token("abc", alphabet) == "abc_"
    assert escape_token("a_b", alphabet) == "a\\ub_"
    assert escape_token("a\\b", alphabet) == "a\\\\b_"
    assert escape_token("a€", alphabet) == "a\\8364;_"  # decimal, not hex
    assert escape_token("\n", alphabet | {"\n"}) == "\\10;_"  # newline always escaped
    assert escape_token("", alphabet) == "_"
    for tok in ["abc", "a_b", "a\\b", "a€", "\\u", "_\\_", "x\n", "😀", "\\95;", ""]:
        assert unescape_token(escape_token(tok, alphabet)) == tok
    assert unescape_token("\\99999999;_") == "\u3013"  # invalid code point
    assert unescape_token("\\" + "9" * 5000 + ";") == "\u3013"  # too long for int()
    assert unescape_token("a\\u\\\\b") == "a_\\b"
    assert unescape_token("\\x;") == "\\x;"  # not an escape
    for tok in HOSTILE:
        assert escape_token(tok, alphabet) == ref.escape(tok, alphabet)
        assert unescape_token(escape_token(tok, alphabet)) == ref.unescape(
            ref.escape(tok, alphabet)
        )


# ----------------------------------------------------------------------------- real vocabularies


@needs_vocab
def test_load_t2t_32k_vocab(enc32k):
    assert enc32k.vocab_size == 33708
    assert enc32k.decode_list([0, 1]) == ["<pad>", "<EOS>"]  # older style, ids 0 and 1
    assert enc32k.num_reserved_ids == 2
    en = "the house is on the hill."
    de = "Das Haus steht auf dem Berg."
    assert enc32k.decode_list(enc32k.encode(en))[:2] == ["the_", "house_"]
    de_pieces = enc32k.decode_list(enc32k.encode(de))
    assert "Haus_" in de_pieces and "Das_" in de_pieces
    assert enc32k.decode(enc32k.encode(en)) == en
    assert enc32k.decode(enc32k.encode(de)) == de


@needs_trax
def test_load_trax_vocab_new_style():
    enc = SubwordTextEncoder(str(TRAX_VOCAB))
    assert enc.vocab_size == 33288
    assert enc.decode_list([PAD_ID, EOS_ID]) == ["<pad>_", "<EOS>_"]
    assert enc.decode([PAD_ID]) == "<pad>" and enc.decode([EOS_ID]) == "<EOS>"


@needs_trax
def test_trax_t2t_shards_decode_to_text():
    tf = pytest.importorskip("tensorflow")
    enc = SubwordTextEncoder(str(TRAX_VOCAB))
    shards = sorted(glob.glob(str(TRAX_DIR / "*-train-*")) + glob.glob(str(TRAX_DIR / "*-dev-*")))
    assert len(shards) == 2
    n = 0
    for shard in shards:
        for rec in tf.data.TFRecordDataset(shard):
            feats = tf.train.Example.FromString(rec.numpy()).features.feature
            for key in ("inputs", "targets"):
                ids = list(feats[key].int64_list.value)
                assert ids[-1] == EOS_ID and EOS_ID not in ids[:-1] and PAD_ID not in ids
                text = enc.decode(ids[:-1])
                assert enc.decode(ids, strip_extraneous=True) == text
                letters = [c for c in text if c.isalpha()]
                assert len(letters) > 0.6 * len(text.replace(" ", ""))
                assert sum(c.isascii() for c in letters) > 0.9 * len(letters)
                assert "\u3013" not in text and "\\" not in text
                assert enc.encode(text) == ids[:-1]  # re-encoding gives T2T's ids
                n += 1
    assert n >= 20


# ----------------------------------------------------------------------------- equality with T2T's
# algorithm


@needs_vocab
def test_fast_encoder_equals_reference_on_multi30k(enc32k, ref32k):
    for lang, n in (("en", None), ("de", 5000), ("fr", 3000)):
        texts = lines(lang, n)
        fresh = SubwordTextEncoder(str(VOCAB_32K))
        got = fresh.encode_batch(texts)
        assert got == [ref32k.encode(t) for t in texts], lang
        assert fresh.encode_batch(texts) == got  # a second call: same ids
        assert [enc32k.encode(t) for t in texts[:500]] == got[:500]


@needs_vocab
def test_fast_encoder_equals_reference_on_hostile_strings(enc32k, ref32k):
    texts = HOSTILE + EXTRA_HOSTILE + random_strings(3000, seed=1)
    assert enc32k.encode_batch(texts) == [ref32k.encode(t) for t in texts]
    for t in texts:
        assert enc32k.encode(t) == ref32k.encode(t), repr(t)
        assert enc32k.encode_without_tokenizing(t) == ref32k.token_ids(t), repr(t)


@needs_vocab
def test_round_trip(enc32k):
    texts = (
        lines("en")
        + lines("de")
        + lines("fr")
        + HOSTILE
        + EXTRA_HOSTILE
        + random_strings(3000, seed=2)
    )
    for text, ids in zip(texts, enc32k.encode_batch(texts), strict=True):
        assert all(2 <= i < enc32k.vocab_size for i in ids)
        assert enc32k.decode(ids) == text, repr(text)
    assert enc32k.encode_batch([b"bytes input"]) == [enc32k.encode("bytes input")]


@needs_vocab
def test_decode_details(enc32k, ref32k):
    ids = enc32k.encode("a house")
    assert enc32k.decode(ids + [EOS_ID, PAD_ID, PAD_ID], strip_extraneous=True) == "a house"
    # Only trailing reserved ids are stripped (T2T's strip_ids).
    assert enc32k.decode([EOS_ID] + ids, strip_extraneous=True) == ref32k.decode([EOS_ID] + ids)
    # Ids outside the vocabulary decode to nothing.
    assert enc32k.decode_list([-1, enc32k.vocab_size]) == ["", ""]
    assert enc32k.decode(ids + [10**6, -5]) == "a house"
    weird = [0, 1, 5, 900, 33000, 1, 0, 17, 2, 3, 4]
    assert enc32k.decode(weird) == ref32k.decode(weird)


# ----------------------------------------------------------------------------- building


def test_build_tiny_corpus_by_hand():
    # One token "ab" (count 5), min_count 5. Iteration 1 segments "ab_" into characters and
    # counts a, ab, ab_, b, b_, _ (5 each); "ab_" is accepted and zeroes "a" and "ab",
    # "b_" is accepted and zeroes "b". Iteration 2 segments "ab_" as one subtoken, so only
    # "a", "ab", "ab_" are counted; "ab_" is accepted again and "b_" is gone. The rest is
    # the alphabet (token, reserved-token and escape characters) with count 0, sorted by
    # string descending.
    enc = SubwordTextEncoder()
    enc.build_from_token_counts({"ab": 5}, 5)
    alphabet = sorted(set("ab<pad>EOS") | set("\\_u;0123456789"), reverse=True)
    assert list(enc.all_subtoken_strings) == ["<pad>_", "<EOS>_", "ab_"] + alphabet
    assert enc.vocab_size == 26
    assert enc.encode("ab") == [2]
    assert enc.decode_list(enc.encode("ba")) == ["b", "a", "_"]
    assert enc.decode(enc.encode("ba ab_x")) == "ba ab_x"
    r = ref.ReferenceSubwordEncoder()
    r.build_from_token_counts({"ab": 5}, 5)
    assert r.all_subtokens == list(enc.all_subtoken_strings)


def test_build_small_corpus_properties(tmp_path):
    corpus = [
        "the cat sat on the mat",
        "the dog sat on the log",
        "a cat and a dog",
        "the end_of_line \\ marker €",
    ] * 3
    counts = tokenizer.count_tokens(corpus)
    enc = SubwordTextEncoder()
    enc.build_from_token_counts(counts, 6)
    subs = list(enc.all_subtoken_strings)
    assert subs[:2] == ["<pad>_", "<EOS>_"]
    assert {"the_", "sat_", "on_", "a_"} <= set(subs)  # counts >= 6: whole words
    assert "mat_" not in subs and "log_" not in subs  # count 3: not whole subtokens
    assert set("".join(counts)) | set("\\_u;0123456789") <= set(subs)  # full alphabet
    for text in corpus + ["unseen words: ZZZ 123 ünïcödé"]:
        assert enc.decode(enc.encode(text)) == text
    # Deterministic: the same counts twice give byte-identical files.
    enc2 = SubwordTextEncoder()
    enc2.build_from_token_counts(collections.Counter(dict(reversed(list(counts.items())))), 6)
    enc.store_to_file(str(tmp_path / "a.subwords"))
    enc2.store_to_file(str(tmp_path / "b.subwords"))
    assert (tmp_path / "a.subwords").read_bytes() == (tmp_path / "b.subwords").read_bytes()


@pytest.fixture(scope="module")
def build_corpus():
    """The builds' lines and their token counts, read and counted once for the cases (each
    case builds from its own copy of the counts)."""
    texts = lines("en", 1500) + lines("de", 1500) + HOSTILE + EXTRA_HOSTILE
    return texts, tokenizer.count_tokens(texts)


@pytest.mark.slow
@pytest.mark.parametrize(
    "min_count,max_len", [(1, None), (2, 5), (3, 1), (3, 2), (4, 200), (40, None)]
)
def test_build_equals_reference(build_corpus, min_count, max_len):
    texts, counts = build_corpus[0], collections.Counter(build_corpus[1])
    enc = SubwordTextEncoder()
    enc.build_from_token_counts(counts, min_count, max_subtoken_length=max_len)
    r = ref.ReferenceSubwordEncoder()
    r.build_from_token_counts(counts, min_count, max_subtoken_length=max_len)
    assert list(enc.all_subtoken_strings) == r.all_subtokens
    sample = texts[::7]
    assert enc.encode_batch(sample) == [r.encode(t) for t in sample]
    assert all(enc.decode(enc.encode(t)) == t for t in sample)


def test_build_options_equal_reference():
    counts = tokenizer.count_tokens(lines("en", 800))
    counts["<pad>"] = 50  # a token equal to a reserved token
    counts["x_y\\z"] = 9
    for kwargs in (
        {"reserved_tokens": ["<pad>", "<EOS>", "<extra>"]},
        {"reserved_tokens": []},
        {"num_iterations": 1},
        {"num_iterations": 6},
    ):
        enc = SubwordTextEncoder()
        enc.build_from_token_counts(counts, 3, **kwargs)
        r = ref.ReferenceSubwordEncoder()
        r.build_from_token_counts(counts, 3, **kwargs)
        assert list(enc.all_subtoken_strings) == r.all_subtokens, kwargs
    with pytest.raises(ValueError, match="prefix"):
        SubwordTextEncoder().build_from_token_counts(counts, 3, reserved_tokens=["<EOS>"])


def test_build_to_target_size_equals_t2ts_own():
    """T2T 1.15.7's own tokenizer counts and ``build_to_target_size(1000, counts, 1, 1e3)`` on
    the same lines (tools/t2t_reference/make_t2t_subword_reference.py): the same subtokens in
    the same order. (Against T2T's own run, not tests/reference_subword.py's model of it,
    whose pure-Python bisection cost ~5 core-s here.)"""
    reference = REPO / "tests" / "data" / "t2t_reference" / "t2t_1.15.7_subword_target_size.json"
    t2t = json.loads(reference.read_text(encoding="utf-8"))
    n = t2t["lines_per_language"]
    counts = tokenizer.count_tokens(lines("en", n) + lines("de", n))
    assert len(counts) == t2t["distinct_tokens"]
    enc = SubwordTextEncoder.build_to_target_size(t2t["target_size"], counts)
    assert list(enc.all_subtoken_strings) == t2t["subtoken_strings"]
    assert abs(enc.vocab_size - 1000) < 100
    gen = SubwordTextEncoder.build_from_generator(iter(lines("en", 2000) + lines("de", 2000)), 1000)
    assert gen.all_subtoken_strings == enc.all_subtoken_strings
    with pytest.raises(ValueError):
        SubwordTextEncoder.build_to_target_size(1000, counts, min_val=10, max_val=5)
    with pytest.raises(ValueError):
        SubwordTextEncoder.build_to_target_size(0, counts)


# ----------------------------------------------------------------------------- files


@needs_vocab
@pytest.mark.parametrize("path", [VOCAB_32K, TRAX_VOCAB])
def test_store_load_round_trip_of_t2t_files(tmp_path, path):
    enc = SubwordTextEncoder(str(path))
    out = tmp_path / "copy.subwords"
    enc.store_to_file(str(out))
    assert out.read_bytes() == path.read_bytes()  # T2T's own files come back byte for byte
    assert SubwordTextEncoder(str(out)).all_subtoken_strings == enc.all_subtoken_strings
    assert [p.name for p in tmp_path.iterdir()] == ["copy.subwords"]  # no temp file left


def test_store_load_built_vocab(tmp_path):
    texts = lines("en", 1000)
    enc = SubwordTextEncoder.build_from_generator(texts, 500)
    path = tmp_path / "vocab.subwords"
    enc.store_to_file(str(path))
    first_lines = path.read_text(encoding="utf-8").split("\n")[:2]
    assert first_lines == ["'<pad>_'", "'<EOS>_'"]
    loaded = SubwordTextEncoder(str(path))
    assert loaded.all_subtoken_strings == enc.all_subtoken_strings
    assert loaded.alphabet == enc.alphabet
    assert loaded.encode_batch(texts) == enc.encode_batch(texts)
    r = ref.ReferenceSubwordEncoder(str(path))
    assert [r.encode(t) for t in texts[:300]] == loaded.encode_batch(texts[:300])


def test_store_errors(tmp_path):
    enc = SubwordTextEncoder()
    enc.build_from_token_counts({"ab": 5}, 1)
    missing_dir = tmp_path / "no" / "such" / "dir" / "v.subwords"
    with pytest.raises(OSError, match="cannot write subword vocabulary to .*v.subwords"):
        enc.store_to_file(str(missing_dir))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OSError, match="afile"):
        enc.store_to_file(str(tmp_path / "afile" / "v.subwords"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize(
    "content,line,what",
    [
        (b"'<pad>'\n'<EOS>'\n'abc\n'd_\n", 3, "unbalanced quotes"),  # never closed
        (b"'<pad>'\n'<EOS>'\nabc'\n", 3, "unbalanced quotes"),
        (b"'<pad>'\n'<EOS>'\n\n'd_'\n", 3, "empty line"),
        (b"'<pad>'\n'<EOS>'\n'a_'\n'\xff\xfe_'\n", 4, "UTF-8"),
        (b"'<pad>'\n\"<EOS>\n", 2, "unbalanced quotes"),
    ],
)
def test_malformed_vocab_file(tmp_path, content, line, what):
    path = tmp_path / "bad.subwords"
    path.write_bytes(content)
    with pytest.raises(VocabFileError, match=f"bad.subwords, line {line}: .*{what}"):
        SubwordTextEncoder(str(path))


def test_missing_and_empty_vocab_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.subwords"):
        SubwordTextEncoder(str(tmp_path / "nope.subwords"))
    (tmp_path / "empty.subwords").write_bytes(b"")
    with pytest.raises(VocabFileError, match="empty"):
        SubwordTextEncoder(str(tmp_path / "empty.subwords"))
    with pytest.raises(ValueError, match="no vocabulary"):
        SubwordTextEncoder().encode("x")


def test_vocab_file_variants(tmp_path):
    # Bare and double-quoted lines load as T2T loads them; CRLF line ends are tolerated.
    path = tmp_path / "v.subwords"
    path.write_bytes(
        b"'<pad>_'\r\n\"<EOS>_\"\r\na_\r\n'b_'\r\n'_'\r\n'a'\r\n'b'\r\n"
        + "".join(f"'{c}'\n" for c in "\\u;0123456789").encode()
    )
    enc = SubwordTextEncoder(str(path))
    assert enc.decode_list([0, 1, 2, 3]) == ["<pad>_", "<EOS>_", "a_", "b_"]
    assert enc.encode("a b ab") == [2, 3, 5, 3]
    assert enc.decode(enc.encode("a b ab")) == "a b ab"


def test_build_exact_integer_path_and_edge_inputs(monkeypatch):
    from t2t_repro.text_encoding import subword_builder

    counts = tokenizer.count_tokens(lines("de", 600))
    r = ref.ReferenceSubwordEncoder()
    r.build_from_token_counts(counts, 2)
    monkeypatch.setattr(subword_builder, "_EXACT_FLOAT_LIMIT", 0)  # force int64 np.add.at
    enc = SubwordTextEncoder()
    enc.build_from_token_counts(counts, 2)
    assert list(enc.all_subtoken_strings) == r.all_subtokens
    # No tokens at all: reserved tokens plus the escape alphabet.
    empty = SubwordTextEncoder()
    empty.build_from_token_counts({}, 1)
    r0 = ref.ReferenceSubwordEncoder()
    r0.build_from_token_counts({}, 1)
    assert list(empty.all_subtoken_strings) == r0.all_subtokens
    assert empty.decode(empty.encode("new text!")) == "new text!"
    with pytest.raises(ValueError, match="integer"):
        SubwordTextEncoder().build_from_token_counts({"a": 1.5}, 1)
    with pytest.raises(ValueError, match="num_iterations"):
        SubwordTextEncoder().build_from_token_counts({"a": 1}, 1, num_iterations=0)


def test_token_text_encoder_round_trip_unknown_and_bad_file(tmp_path):
    from t2t_repro.text_encoding.text_encoder import VocabFileError
    from t2t_repro.text_encoding.token_encoder import UNK_ID, TokenTextEncoder

    encoder = TokenTextEncoder(tokens=["S", "/S", "NP", "/NP", "NN"])
    assert encoder.tokens[:3] == ("<pad>", "<EOS>", "<UNK>") and encoder.vocab_size == 8
    assert encoder.encode("S NP NN /NP /S") == [3, 5, 7, 6, 4]
    assert encoder.encode("S XYZ") == [3, UNK_ID]
    assert encoder.decode([3, 5, 7, 6, 4, 1, 0], strip_extraneous=True) == "S NP NN /NP /S"
    path = str(tmp_path / "vocab.tokens")
    encoder.store_to_file(path)
    assert TokenTextEncoder(path).tokens == encoder.tokens
    (tmp_path / "bad").write_text("<pad>\n<EOS>\nA B\n")
    with pytest.raises(VocabFileError, match="not a token vocabulary"):
        TokenTextEncoder(str(tmp_path / "bad"))


def test_a_subtoken_with_a_newline_is_stored_and_read_back_as_t2t_does(tmp_path):
    """T2T 1.15.7's store_to_file and _load_from_file_object on subtokens with newlines
    (recorded by tools/t2t_reference/make_t2t_usr_dir_reference.py --vocab_quirks): one
    subtoken a line, so '\\n' and ' \\n' each read back as two empty subtokens, 'a\\nb' as two
    quoted halves. tests/test_t2t_usr_dir_hooks.py has T2T's own datagen of such a vocab."""
    reference = REPO / "tests" / "data" / "t2t_usr_dir_hooks_reference" / "t2t_1.15.7_datagen.json"
    t2t = json.loads(reference.read_text(encoding="utf-8"))["vocab_file_quirks"]
    enc = SubwordTextEncoder()
    enc._init_subtokens(t2t["subtokens"])
    path = tmp_path / "nl.subwords"
    enc.store_to_file(str(path))
    assert path.read_bytes() == t2t["file"].encode("utf-8")
    assert list(SubwordTextEncoder(str(path)).all_subtoken_strings) == t2t["read_back"]
    assert t2t["read_back"].count("") == 4 and len(t2t["read_back"]) == 10
