"""T2T's text encoders as usr_dirs use them beyond the public API (an audit's seven findings):
unquoted subword files, SubwordTextEncoder's internal steps (called and overridden),
TokenTextEncoder's dicts, T2T's error types, module names, argument names and ``dump``.

Every expected value is T2T 1.15.7's output: the same calls run with the real tensor2tensor
1.15.7 (``from tensor2tensor.data_generators import text_encoder, tokenizer`` in a venv with
it installed) and their printed results pasted here; none is derived from this project. The
project's own one-line messages and its kept refusal are marked as such."""

import io

import pytest

from t2t_repro.t2t_compat import text_encoder as te
from t2t_repro.t2t_compat import tokenizer
from t2t_repro.text_encoding import text_encoder as project

# T2T's build_from_generator(["Hello, world. Don't stop, it's fine."], 30).all_subtoken_strings
SUB = ["<pad>_", "<EOS>_", "_", "o", "t", "l", " ", "s", "n", "i", "e", ".", ",", "'", "w", "r"]
SUB += ["p", "f", "d", "H", "D", "u", "a", "\\", "S", "O", "E", ">", "<", ";", *"9876543210"]
TEXT = "Hello world, don't stop."
HELLO = [19, 10, 5, 5, 3, 2]


def _ids(text: str) -> list[int]:
    return [int(i) for i in text.split()]


# T2T's encode(TEXT) with that vocabulary (built, or read back from its quoted file)
TEXT_IDS = _ids("19 10 5 5 3 2 14 3 15 5 18 2 12 6 2 18 3 8 2 13 2 4 2 7 4 3 16 2 11 2")
# ... and read back from its unquoted file (store_to_file(path, add_single_quotes=False))
UNQUOTED_IDS = _ids("19 10 5 5 3 2 14 3 15 5 18 2 12 23 36 37 29 2 18 3 8 2 23 36 30 29 2 4 2")
UNQUOTED_IDS += _ids("7 4 3 16 2 11 2")


@pytest.fixture
def quoted(tmp_path):
    path = tmp_path / "q.subwords"
    path.write_text("".join(f"'{s}'\n" for s in SUB))  # T2T's store_to_file
    return str(path)


def test_1_an_unquoted_vocab_file_loads_as_t2t_loads_it(tmp_path):
    path = tmp_path / "noq.subwords"  # T2T's store_to_file(path, add_single_quotes=False)
    path.write_bytes("".join(s + "\n" for s in SUB).encode())
    for cls in (te.SubwordTextEncoder, project.SubwordTextEncoder):
        enc = cls(str(path))
        # T2T: the " " and "'" lines read back as empty subtokens, which keep their ids
        assert enc.all_subtoken_strings == tuple(SUB[:6] + [""] + SUB[7:13] + [""] + SUB[14:])
        assert enc.encode(TEXT) == UNQUOTED_IDS
        assert enc.decode(enc.encode(TEXT)) == TEXT
    assert len(te.SubwordTextEncoder(str(path))._subtoken_string_to_id) == 38
    # The project's refusal kept: a quoted file with a line T2T cannot have written there.
    path.write_text("'<pad>_'\n'<EOS>_'\n\n'a'\n")
    with pytest.raises(ValueError, match="line 3: empty line"):
        te.SubwordTextEncoder(str(path))


def test_2_subword_internals_and_their_overrides(quoted):
    enc = te.SubwordTextEncoder()
    enc._init_subtokens_from_list(list(SUB))
    enc._init_alphabet_from_tokens(SUB)
    assert enc._max_subtoken_len == 6 and enc._all_subtoken_strings == SUB
    first = [("<pad>_", 0), ("<EOS>_", 1), ("_", 2), ("o", 3)]
    assert list(enc._subtoken_string_to_id.items())[:4] == first
    assert "".join(sorted(enc._alphabet)) == " ',.0123456789;<>DEHOS\\_adefilnoprstuw"
    assert enc._escaped_token_to_subtoken_strings("Hello_") == ["H", "e", "l", "l", "o", "_"]
    assert enc._escaped_token_to_subtoken_ids("Hello_") == HELLO
    assert enc._token_to_subtoken_ids("don't") == [18, 3, 8, 13, 4, 2]
    ids = _ids("19 10 5 5 3 2 6 2 23 38 37 39 29 23 38 37 38 29 23 38 37 37 29 2")
    assert enc._tokens_to_subtoken_ids(["Hello", " ", "xyz"]) == ids
    assert enc._subtoken_ids_to_tokens(ids) == ["Hello", " ", "xyz"]
    assert [enc._subtoken_id_to_subtoken_string(i) for i in (3, 999)] == ["o", ""]
    assert enc.encode(TEXT) == TEXT_IDS
    res = te.SubwordTextEncoder()  # reserved tokens: first, and never encoded to
    res._init_subtokens_from_list(["a", "b", "ab", "_", ""], ["<pad>", "<EOS>", "ab"])
    res._init_alphabet_from_tokens(["ab"])
    assert res._all_subtoken_strings == ["<pad>", "<EOS>", "ab", "a", "b", "ab", "_", ""]
    assert res._subtoken_string_to_id == {"a": 3, "b": 4, "ab": 5, "_": 6}
    assert [res.encode("ab"), res.encode("ba")] == [[5, 6], [4, 3, 6]]
    assert res.encode_without_tokenizing("bab") == [4, 5, 6]
    f = te.SubwordTextEncoder()
    f._load_from_file_object(io.StringIO("'<pad>_'\n'<EOS>_'\nab\n'a'\n\"b\"\n'_'\n"))
    assert f.all_subtoken_strings == ("<pad>_", "<EOS>_", "ab", "a", "b", "_")
    assert f.encode("ab ba") == [2, 5, 4, 3, 5]
    g = te.SubwordTextEncoder()
    g._load_from_file(quoted)
    assert g.encode(TEXT) == TEXT_IDS

    class Dep(te.SubwordTextEncoder):
        def encode(self, raw_text):
            return self._tokens_to_subtoken_ids(raw_text.split())

    class Ov1(te.SubwordTextEncoder):
        def _escaped_token_to_subtoken_ids(self, escaped_token):
            return [len(escaped_token)]

    class Ov2(te.SubwordTextEncoder):
        def _token_to_subtoken_ids(self, token):
            return super()._token_to_subtoken_ids(token.lower())

    class Ov3(te.SubwordTextEncoder):
        def _escaped_token_to_subtoken_strings(self, escaped_token):
            return ["_", *super()._escaped_token_to_subtoken_strings(escaped_token)]

    class Ov4(te.SubwordTextEncoder):
        def _tokens_to_subtoken_ids(self, tokens):
            return super()._tokens_to_subtoken_ids(tokens[::-1])

    t2t = {  # T2T's encode(TEXT), encode_without_tokenizing("Hello")
        Dep: ("19 10 5 5 3 2 14 3 15 5 18 12 2 18 3 8 13 4 2 7 4 3 16 11 2", HELLO),
        Ov1: ("6 6 3 4 2 2 5 2", [6]),
        Ov2: ("23 38 39 35 29 10 5 5 3 2 14 3 15 5 18 2 12 6 2 18 3 8 2 13 2 4 2 7 4 3 16 2 11 2",
              _ids("23 38 39 35 29 10 5 5 3 2")),
        Ov3: ("2 19 10 5 5 3 2 2 14 3 15 5 18 2 2 12 6 2 2 18 3 8 2 2 13 2 2 4 2 2 7 4 3 16 2 2 "
              "11 2", [2, *HELLO]),
        Ov4: ("11 2 7 4 3 16 2 4 2 13 2 18 3 8 2 12 6 2 14 3 15 5 18 2 19 10 5 5 3 2", HELLO),
    }  # fmt: skip
    for cls, (ids, ewt) in t2t.items():
        enc = cls(quoted)
        assert (enc.encode(TEXT), enc.encode_without_tokenizing("Hello")) == (_ids(ids), ewt)
        assert enc.encode_batch([TEXT]) == [_ids(ids)]

    class Dec1(te.SubwordTextEncoder):
        def _subtoken_id_to_subtoken_string(self, subtoken):
            return super()._subtoken_id_to_subtoken_string(subtoken).upper()

    class Dec2(te.SubwordTextEncoder):
        def _subtoken_ids_to_tokens(self, subtokens):
            return [f"x{s}" for s in subtokens]

    for cls, t2t_decodes in ((Dec1, ("SOT<EOS>", ["S", "O", ""], "SO")),
                             (Dec2, ("x7 x3 x4 x1", ["s", "o", ""], "x7 x3"))):  # fmt: skip
        enc = cls(quoted)
        decodes = enc.decode([7, 3, 4, 1]), enc.decode_list([7, 3, 99])
        assert (*decodes, enc.decode([7, 3, 1, 0], strip_extraneous=True)) == t2t_decodes


def test_3_token_encoder_dicts():
    enc = te.TokenTextEncoder(None, vocab_list=["a", "b", "<pad>", "c", "<EOS>", "a"])
    assert enc._token_to_id == {"<pad>": 0, "<EOS>": 1, "a": 5, "b": 3, "c": 4}
    assert enc._id_to_token == {0: "<pad>", 1: "<EOS>", 2: "a", 3: "b", 4: "c", 5: "a"}

    class Cz(te.TokenTextEncoder):  # an encode override as pointer_generator_word's
        def encode(self, s):
            tokens = [w.split("|")[0] for w in s.strip().split()]
            if self._replace_oov is not None:
                tokens = [t if t in self._token_to_id else self._replace_oov for t in tokens]
            ret = [self._token_to_id[t] for t in tokens]
            return ret[::-1] if self._reverse else ret

    assert Cz(None, vocab_list=["a", "b"]).encode("a|x b|y") == [2, 3]
    reversed_oov = Cz(None, vocab_list=["a", "b"], replace_oov="b", reverse=True)
    assert reversed_oov.encode("a|x q|y") == [3, 2]


def test_4_t2ts_error_types(tmp_path):
    with pytest.raises(KeyError) as e:  # T2T: KeyError('b')
        te.TokenTextEncoder(None, vocab_list=["a"]).encode("a b")
    assert str(e.value).startswith("token 'b' is not in")  # the project's line, unquoted
    with pytest.raises(ValueError, match="nope.subwords") as e:  # T2T: "File ... not found"
        te.SubwordTextEncoder(str(tmp_path / "nope.subwords"))
    assert isinstance(e.value, FileNotFoundError)  # what the project's tools report
    (tmp_path / "v.csv").write_text("the,10\nfoo,ten\n")
    with pytest.raises(ValueError, match="'foo,ten' is not token,count"):  # T2T: int('ten')
        tokenizer.vocab_token_counts(str(tmp_path / "v.csv"), None)


def test_5_t2ts_module_names():
    assert te.RESERVED_TOKENS_BYTES == [b"<pad>", b"<EOS>"]
    assert te._escape_token("a_b\\c\n\xe9!", set("abc\\_u;0123456789")) == (
        "a\\ub\\\\c\\10;\\233;\\33;_"
    )
    assert te._unescape_token("a\\ub\\\\c\\10;\\233;\\99999999;_") == "a_b\\c\né〓"
    assert sorted(te._ESCAPE_CHARS) == [*"0123456789", ";", "\\", "_", "u"]
    assert te._UNESCAPE_REGEX.pattern == "\\\\u|\\\\\\\\|\\\\([0-9]+);"
    assert te._UNESCAPE_REGEX.sub("!", "x\\u\\\\\\12;y") == "x!!!y"
    alnum = tokenizer._ALPHANUMERIC_CHAR_SET
    assert len(alnum) == 133547
    assert [c in alnum for c in "a_\u0663 \xbd\u0301"] == [True, False, True, False, True, False]


def test_6_t2ts_argument_names(tmp_path, quoted):
    enc = te.SubwordTextEncoder(quoted)
    assert enc.encode(s="Hello") == HELLO
    enc.store_to_file(filename=str(tmp_path / "kw.subwords"), add_single_quotes=False)
    assert (tmp_path / "kw.subwords").read_text() == "".join(s + "\n" for s in SUB)
    tokens = te.TokenTextEncoder(None, vocab_list=["a", "b", "<pad>", "c", "<EOS>", "a"])
    tokens.store_to_file(filename=str(tmp_path / "kw.tokens"))
    assert (tmp_path / "kw.tokens").read_text() == "<pad>\n<EOS>\na\nb\nc\na\n"
    assert tokens.encode(s="c a") == [4, 5]
    assert te.ByteTextEncoder().encode(s="h\xe9") == [106, 197, 171]
    assert te.TextEncoder().encode(s="1 2") == [3, 4]


def test_7_dump_leaves_out_empty_subtokens(tmp_path, capsys):
    path = tmp_path / "d.subwords"
    path.write_text("'<pad>_'\n'<EOS>_'\n''\n'a'\n'a'\n'_'\n")
    te.SubwordTextEncoder(str(path)).dump()
    assert capsys.readouterr().out == "0 : '<pad>_', 1 : '<EOS>_', 4 : 'a', 5 : '_'\n"
