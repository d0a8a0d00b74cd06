"""The SavedModel's in-graph subword encoding (``text_encoding/graph_text_encoder.py``) equals
the Python encoder, on a built vocabulary, T2T's own and hostile lines; its plain vocabulary
file refuses what it cannot hold."""

import gzip

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.text_encoding.graph_text_encoder import GraphSubwordEncoder, write_plain_vocab
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder
from tests.tools import ROOT

SHARED = ROOT.parent / "shared" / "data"
HOSTILE = [
    "",
    " ",
    "   ",
    "a  b",
    " leading",
    "trailing ",
    "under_score __x",
    "back\\slash \\u",
    "\\12; looks escaped",
    "12,000.5 €",
    "emoji 😀👍🏽 ok",
    "日本語のテキスト",
    "Ωmega-ß straße",
    "tab\there",
    "new\nline",
    "ctrl \x01\x02 x",
    "Hello, World!",
    "\u3013 odd \ufffd",
]


def graph_encoder(encoder, tmp_path):
    path = str(tmp_path / "vocab.txt")
    write_plain_vocab(list(encoder.all_subtoken_strings), path)
    return GraphSubwordEncoder(path, encoder.alphabet)


def assert_same_as_python(encoder, graph, lines):
    got = graph.encode(tf.constant(lines)).to_list()
    assert got == [encoder.encode(line) for line in lines]
    ids = [encoder.encode(line) for line in lines]
    texts = graph.decode(tf.ragged.constant(ids, dtype=tf.int32, ragged_rank=1)).numpy()
    assert [t.decode("utf-8") for t in texts] == [encoder.decode(i) for i in ids]
    rng = np.random.default_rng(0)
    noise = [
        rng.integers(0, encoder.vocab_size, size=rng.integers(1, 25)).tolist() for _ in range(200)
    ]
    texts = graph.decode(tf.ragged.constant(noise, dtype=tf.int32)).numpy()
    assert [t.decode("utf-8") for t in texts] == [encoder.decode(i) for i in noise]


def test_graph_encoder_matches_python_on_a_built_vocab(tmp_path):
    corpus = [
        "The cat sat on the mat.",
        "Dogs_run fast; cats don't!",
        "Zoë's café, 3.5 km",
        "back\\slash and under_score",
        "numbers 12345 and 6789",
    ] * 20
    encoder = SubwordTextEncoder.build_from_generator(corpus, 120)
    lines = HOSTILE + corpus[:5] + ["unseen wörds ñ and ¿symbols?"]
    assert_same_as_python(encoder, graph_encoder(encoder, tmp_path), lines)


def test_graph_encoder_matches_python_on_t2t_vocab_and_multi30k(tmp_path):
    vocab = SHARED / "t2t" / "vocab.translate_ende_wmt32k.32768.subwords"
    if not vocab.exists():
        pytest.skip(f"shared data not found at {SHARED}")
    lines = list(HOSTILE)
    for name in ("train.en.gz", "train.de.gz"):
        path = SHARED / "multi30k" / name
        if path.exists():
            with gzip.open(path, "rt", encoding="utf-8") as f:
                lines += [next(f).rstrip("\n") for _ in range(200)]
    encoder = SubwordTextEncoder(str(vocab))
    assert_same_as_python(encoder, graph_encoder(encoder, tmp_path), lines)


def test_plain_vocab_refuses_line_breaks_and_duplicates(tmp_path):
    with pytest.raises(ValueError, match="line breaks"):
        write_plain_vocab(["<pad>", "a\nb_"], str(tmp_path / "v"))
    with pytest.raises(ValueError, match="duplicate"):
        write_plain_vocab(["<pad>", "a_", "a_"], str(tmp_path / "v"))
