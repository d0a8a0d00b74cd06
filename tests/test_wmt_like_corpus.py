"""The WMT-like corpus generator of bench/bench_datagen_scale.py: deterministic, dirty as
promised, and read by translate_ende_wmt32k from --tmp_dir as a real WMT download would be."""

from __future__ import annotations

import os

import numpy as np

from bench import wmt_like_corpus as corpus
from t2t_repro import registry
from t2t_repro.data.pair_sources import check_all
from t2t_repro.data.text_files import ReadStats

SMALL = {"pairs": 4000, "dev_pairs": 30, "test_pairs": 40, "n_types": 20_000}


def _files(tmp_dir) -> dict[str, bytes]:
    return {name: (tmp_dir / name).read_bytes() for name in sorted(os.listdir(tmp_dir))}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    small = dict(SMALL, pairs=1000)
    corpus.write_corpus(str(tmp_path / "a"), seed=3, **small)
    corpus.write_corpus(str(tmp_path / "b"), seed=3, **small)
    corpus.write_corpus(str(tmp_path / "c"), seed=4, **small)
    a, b, c = (_files(tmp_path / d) for d in "abc")
    assert a == b
    assert a.keys() == c.keys() and all(a[k] != c[k] for k in a)


def test_lengths_like_wmt14_with_a_long_tail_and_empty_sides():
    rng = np.random.default_rng(0)
    sides = [corpus.line_lengths(rng, m, 200_000) for m in corpus.MODELS.values()]
    en, de = (np.concatenate([side[i] for side in sides]) for i in (0, 1))
    assert 22 <= en[en > 0].mean() <= 26 and 20 <= de[de > 0].mean() <= 26
    assert en.max() >= 1000 and (en >= 300).sum() > 10
    assert ((en == 0) & (de > 0)).any() and ((de == 0) & (en > 0)).any()
    assert ((en == 0) & (de == 0)).any()


def test_zipfian_ranks_over_a_million_types():
    ranks = corpus.zipf_ranks(np.random.default_rng(0), 1_500_000, 500_000)
    counts = np.bincount(ranks, minlength=1_500_000)
    assert ranks.min() == 0 and ranks.max() < 1_500_000
    assert 0.04 < counts[0] / len(ranks) < 0.09  # "the"
    assert 1.5 < counts[0] / counts[1] < 2.5 and 5 < counts[0] / counts[9] < 15  # ~1/k
    assert len(np.unique(ranks)) > 40_000  # a long tail: most ranks seen rarely


def test_every_oddity_renders_and_punctuation_attaches():
    table = corpus.Table.build([b"alpha", b"beta"])
    lengths = np.array([3, 0] + [2000] * 3)
    text = corpus.render(table, lengths, np.random.default_rng(0), dirt_rate=0.9)
    lines = text.split(b"\n")[:-1]
    assert len(lines) == 5 and lines[1] == b""
    assert all(oddity in text for oddity in corpus.ODDITIES)
    assert b" ," not in text and b" .\n" not in text and b" \n" not in text
    assert not text.startswith(b" ")


def test_translate_ende_wmt32k_reads_it_locally_with_the_dirt_counted(tmp_path):
    summary = corpus.write_corpus(str(tmp_path), seed=1, **SMALL)
    assert set(summary["files"]) == {
        f"{stem}.{lang}"
        for stem in (*corpus.REAL_TRAIN_LINES, "newstest2013", "newstest2014-deen")
        for lang in ("en", "de")
    }
    problem = registry.problem("translate_ende_wmt32k")
    counts = {}
    for split in ("train", "dev", "test"):
        sources = problem.split_sources(str(tmp_path), split)  # local files, no tfds
        counts[split] = check_all(sources)
    assert counts == {"train": 4000, "dev": 30, "test": 40}
    stats = ReadStats()
    pairs = list(problem.iter_pairs(problem.split_sources(str(tmp_path), "train"), stats))
    assert stats.dropped_empty > 0 and stats.replaced_bytes > 0
    assert len(pairs) == 4000 - stats.dropped_empty
    text = "\n".join(s + "\t" + t for s, t in pairs)
    for oddity in ("http", "&amp;", "\t", "\x0b", "\ufffd", "\u2028", "Ã¼"):
        assert oddity in text, oddity
