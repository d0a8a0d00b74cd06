"""The WMT-like corpus generator of bench/bench_datagen_scale.py: deterministic, dirty as
promised, and read by translate_ende_wmt32k from --tmp_dir as a real WMT download would be."""

from __future__ import annotations

import os

import numpy as np

from t2t_repro import registry
from t2t_repro.data.pair_sources import check_all
from t2t_repro.data.text_files import ReadStats
from tools import wmt_like_corpus as corpus

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
    for split in ("train", "dev"):  # T2T's splits of this problem
        sources = problem.split_sources(str(tmp_path), split)  # local files, no tfds
        counts[split] = check_all(sources)
    # newstest2014: the paper's wmt_ende reads it as its test split
    counts["test"] = check_all(registry.problem("wmt_ende").split_sources(str(tmp_path), "test"))
    assert counts == {"train": 4000, "dev": 30, "test": 40}
    stats = ReadStats()
    pairs = list(problem.iter_pairs(problem.split_sources(str(tmp_path), "train"), stats))
    assert stats.dropped_empty > 0 and stats.replaced_bytes > 0
    assert len(pairs) == 4000 - stats.dropped_empty
    text = "\n".join(s + "\t" + t for s, t in pairs)
    for oddity in ("http", "&amp;", "\t", "\x0b", "\ufffd", "\u2028", "Ã¼"):
        assert oddity in text, oddity


def test_benchmark_reads_stages_and_summary_from_datagen_output():
    from bench import bench_datagen_scale as bench

    class Sampler:
        cpu_at = staticmethod(lambda t: 2.0 * t)  # a fake: 2 CPU-seconds per wall second

    p = bench.PROBLEM
    run = {
        "seconds": 30.0,
        "cpu_seconds": 55.0,
        "sampler": Sampler(),
        "stderr": [
            (3.0, f"{p}: building vocab /d/vocab.{p}.32768.subwords (target size 32768)"),
            (20.0, f"{p} train: 100/200 lines (50%), 10 lines/s, ETA 10s"),
            (25.0, f"{p} train: 200/200 lines (100%), 10 lines/s, ETA 0s, done in 15.0s"),
            (26.0, f"{p} dev: 3/3 lines (100%), 3 lines/s, ETA 0s, done in 1.0s"),
        ],
    }
    wall, cpu = bench.datagen_stages(run)
    assert wall == {
        "startup_and_source_checks": 3.0,
        "vocab_build": 7.0,
        "train_encode_and_shards": 15.0,
        "dev_encode_and_shards": 1.0,
        "total": 30.0,
    }
    assert cpu["vocab_build"] == 14.0 and cpu["total"] == 55.0
    stdout = (
        f"problem:        {p} -> /d\npairs:          train 1,200, dev 3,000, test 3,003\n"
        "tokens written: inputs 45,000, targets 44,000\nvocab size:     33,152 (built: /d/v)\n"
        "shards:         102 written, 0 kept\n"
        "dropped empty pairs: 156; replaced undecodable bytes: 1,314\ntime:           64.3s\n"
    )
    assert bench.datagen_summary(stdout) == {
        "train_pairs": 1200,
        "dev_pairs": 3000,
        "test_pairs": 3003,
        "input_tokens": 45000,
        "target_tokens": 44000,
        "vocab_size": 33152,
        "dropped_empty_pairs": 156,
        "replaced_undecodable_bytes": 1314,
    }
