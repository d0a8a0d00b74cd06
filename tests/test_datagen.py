"""Datagen machinery: T2T-named shards that decode back, idempotency, bad data, the CLI."""

from __future__ import annotations

import functools
import glob
import io
import os
import random
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.builtin.problems.algorithmic import TranslateToy
from t2t_repro.builtin.problems.base import DataError
from t2t_repro.data import datagen_lib, records, text_files
from t2t_repro.text_encoding.reserved_tokens import EOS_ID
from tests.tools import USER_ENV, assert_quiet, run_tool

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


class SmallToy(TranslateToy):
    """translate_toy, small enough for a unit test (not registered)."""

    num_shards = {"train": 3, "dev": 1, "test": 1}
    num_pairs = {"train": 300, "dev": 40, "test": 40}


def _all_examples(data_dir, name, split, read=records.read_examples):
    return [
        ex
        for path in sorted(glob.glob(os.path.join(data_dir, f"{name}-{split}-*")))
        for ex in read(path)
    ]


def _mtimes(data_dir):
    return {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(data_dir, "small_toy-*"))}


def test_toy_shards_are_t2t_named_and_decode_back(tmp_path):
    problem = SmallToy()
    summary = problem.generate_data(
        str(tmp_path), str(tmp_path / "raw"), num_workers=1, progress=False
    )
    names = sorted(os.listdir(tmp_path))
    assert "vocab.small_toy.256.subwords" in names
    for split, n in problem.num_shards.items():
        assert [f for f in names if f.startswith(f"small_toy-{split}-")] == [
            records.shard_name("small_toy", split, i, n) for i in range(n)
        ]
    assert not [f for f in names if f.endswith(".tmp")]
    assert summary.pairs == {"train": 300, "dev": 40, "test": 40}
    assert summary.vocab_built and summary.shards_written == 5 and summary.shards_kept == 0
    encoder = problem.get_encoders(str(tmp_path))["inputs"]
    assert (
        problem.vocab_sizes(str(tmp_path))
        == (encoder.vocab_size, encoder.vocab_size)
        == (summary.vocab_size, summary.vocab_size)
    )
    # Each shard read once for both checks below: records.read_examples parses eagerly, ~1 ms
    # a record (~0.3 core-s: the train and test shards were read twice, AMD EPYC Zen 3).
    read = functools.cache(records.read_examples)
    tokens = 0
    for split in ("train", "test"):
        examples = _all_examples(str(tmp_path), "small_toy", split, read)
        src, tgt = problem.source_lines("", split)
        for ex in examples:
            for key in ("inputs", "targets"):
                assert ex[key][-1] == EOS_ID and EOS_ID not in ex[key][:-1]
        decoded = sorted(
            (encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
            for ex in examples
        )
        assert decoded == sorted(zip(src, tgt, strict=True))
        if split == "train":
            tokens = sum(len(ex["inputs"]) for ex in examples)
    # T2T's generate_files + shuffle_dataset: each split's pairs dealt round-robin, then every
    # shard (train, dev, test in order) shuffled from one random.Random(429459) sequence.
    rng = random.Random(429459)
    for split, n in problem.num_shards.items():
        src, _ = problem.source_lines("", split)
        for i, path in enumerate(records.shard_paths(str(tmp_path), "small_toy", split, n)):
            dealt = src[i::n]
            order = list(range(len(dealt)))
            rng.shuffle(order)
            written = [encoder.decode(e["inputs"][:-1]) for e in read(path)]
            assert written == [dealt[k] for k in order] and written != dealt
    assert summary.input_tokens >= tokens


def test_a_kept_shards_shuffle_is_replayed_by_one_of_the_same_length():
    """Why a rerun may keep finished shards: random.shuffle's draws depend only on the list's
    length and the generator's state, so shuffling a stand-in list leaves the generator where
    shuffling the shard's records would."""
    records_ = [f"record {i}".encode() for i in range(1000)]
    real, stand_in = random.Random(429459), random.Random(429459)
    real.shuffle(records_)
    stand_in.shuffle([0] * len(records_))
    assert real.getstate() == stand_in.getstate()
    shorter = random.Random(429459)
    shorter.shuffle([0] * (len(records_) - 1))
    assert shorter.getstate() != real.getstate()


def test_rerun_keeps_finished_shards_and_rewrites_missing_ones(tmp_path):
    data_dir = str(tmp_path)
    SmallToy().generate_data(data_dir, "", num_workers=1, progress=False)
    before = _mtimes(data_dir)
    again = SmallToy().generate_data(data_dir, "", num_workers=1, progress=False)
    assert _mtimes(data_dir) == before
    assert again.shards_written == 0 and again.shards_kept == 5 and not again.vocab_built
    assert again.pairs == {"train": 300, "dev": 40, "test": 40}

    shards = records.shard_paths(data_dir, "small_toy", "train", 3)
    dev = records.shard_paths(data_dir, "small_toy", "dev", 1)[0]
    original = {p: Path(p).read_bytes() for p in (shards[1], dev)}
    for path in original:
        os.remove(path)  # lost shards: the dev shard's shuffle follows the train shards' draws
    Path(shards[1] + ".0123abcd.tmp").write_bytes(b"half-written")  # an interrupted write
    unshuffled = Path(data_dir) / "small_toy-unshuffled-train-00002-of-00003"
    unshuffled.write_bytes(b"junk")  # an interrupted round-robin pass
    third = SmallToy().generate_data(data_dir, "", num_workers=1, progress=False)
    assert third.shards_written == 2 and third.shards_kept == 3
    assert third.pairs == {"train": 300, "dev": 40, "test": 40}
    for path, data in original.items():
        assert Path(path).read_bytes() == data  # the bytes of one uninterrupted run
    after = _mtimes(data_dir)
    assert {p: t for p, t in after.items() if p not in original} == {
        p: t for p, t in before.items() if p not in original
    }
    assert not glob.glob(os.path.join(data_dir, "*.tmp")) and not unshuffled.exists()


def test_max_cases_trial_shards_are_not_taken_for_finished_ones(tmp_path):
    trial = SmallToy().generate_data(str(tmp_path), "", num_workers=1, max_cases=20, progress=False)
    assert trial.pairs == {"train": 20, "dev": 20, "test": 20}
    assert len(_all_examples(str(tmp_path), "small_toy", "train")) == 20
    full = SmallToy().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    assert full.vocab_built  # the trial's vocab saw only 20 pairs: rebuilt
    assert full.shards_written == 5 and full.pairs["train"] == 300
    assert len(_all_examples(str(tmp_path), "small_toy", "train")) == 300


def test_trial_vocab_shared_with_rev_is_rebuilt_for_a_full_run(tmp_path):
    small_toy_rev = type(
        "SmallToyRev",
        (SmallToy,),
        {"problem_name": "small_toy_rev", "reverse": True, "vocab_name": "small_toy"},
    )
    SmallToy().generate_data(str(tmp_path), "", num_workers=1, max_cases=20, progress=False)
    assert (tmp_path / "vocab.small_toy.256.subwords.max_cases").read_text().strip() == "20"
    rev = small_toy_rev().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    assert rev.vocab_built and rev.pairs["train"] == 300
    assert not (tmp_path / "vocab.small_toy.256.subwords.max_cases").exists()
    again = SmallToy().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    assert not again.vocab_built and again.shards_written == 5  # its shards used the trial vocab


def test_changed_vocab_regenerates_shards(tmp_path):
    SmallToy().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    vocab = tmp_path / "vocab.small_toy.256.subwords"
    vocab.write_text(vocab.read_text().replace("'ta_'\n", "").replace("'ta'\n", ""))
    summary = SmallToy().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    assert summary.shards_written == 5 and not summary.vocab_built


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_mismatched_line_counts_name_both_files(tmp_path):
    src = _write(tmp_path / "train.src", b"a\nb\nc\n")
    tgt = _write(tmp_path / "train.tgt", b"x\ny\n")
    with pytest.raises(DataError) as e:
        registry.problem("parallel_corpus").generate_data(
            str(tmp_path / "out"), str(tmp_path), progress=False
        )
    message = str(e.value)
    assert src in message and tgt in message and "3 lines" in message and "2" in message
    assert not glob.glob(
        str(tmp_path / "out" / "parallel_corpus-*")
    )  # failed before writing anything


def test_empty_pairs_dropped_and_undecodable_bytes_replaced_and_counted(tmp_path):
    _write(tmp_path / "train.src", b"hello world\n\nbad \xff\xfe bytes\nfine\ntrunc \xc3\n  \n")
    _write(tmp_path / "train.tgt", b"hallo welt\nlost\nschlecht\n\ngut\nleer\n")
    problem = registry.problem("parallel_corpus")
    summary = problem.generate_data(
        str(tmp_path / "out"), str(tmp_path), num_workers=1, progress=False
    )
    assert summary.dropped_empty == 3  # lines 2, 4 and 6 have an empty side
    assert summary.replaced_bytes == 3  # \xff, \xfe and the truncated \xc3
    assert summary.pairs == {"train": 3}
    src, tgt = problem.source_lines(str(tmp_path), "train")
    assert src == ["hello world", "bad \ufffd\ufffd bytes", "trunc \ufffd"]
    assert tgt == ["hallo welt", "schlecht", "gut"]
    encoder = problem.get_encoders(str(tmp_path / "out"))["inputs"]
    examples = _all_examples(str(tmp_path / "out"), "parallel_corpus", "train")
    decoded = sorted(encoder.decode(ex["inputs"][:-1]) for ex in examples)
    assert decoded == sorted(src)


def test_text_file_helpers(tmp_path):
    import gzip

    gz = tmp_path / "a.gz"
    with gzip.open(gz, "wb") as f:
        f.write("\ufeffeins\r\nzwei\n drei \nlast-without-newline".encode())
    stats = text_files.ReadStats()
    assert list(text_files.read_lines(str(gz), stats)) == [
        "eins",
        "zwei",
        "drei",
        "last-without-newline",
    ]
    assert text_files.count_lines(str(gz)) == 4 and stats.replaced_bytes == 0
    # As T2T's tf.gfile reads them (text_problems.py, txt_line_iterator): the mark stays.
    t2t_lines = list(text_files.read_lines(str(gz), keep_byte_order_mark=True))
    assert t2t_lines == ["\ufeffeins", "zwei", "drei", "last-without-newline"]
    sgm = _write(
        tmp_path / "t.sgm",
        b'<refset>\n<doc id="1">\n<seg id="1"> Guten Tag </seg>\n<seg id="2">x</seg>\n</doc>\n',
    )
    assert list(text_files.read_lines(sgm, sgm=True)) == ["Guten Tag", "x"]
    assert text_files.count_lines(sgm, sgm=True) == 2
    with pytest.raises(DataError, match="Missing data file"):
        list(text_files.read_lines(str(tmp_path / "nope")))


def test_pool_encoding_matches_in_process(tmp_path):
    SmallToy().generate_data(str(tmp_path), "", num_workers=1, progress=False)
    vocab = str(tmp_path / "vocab.small_toy.256.subwords")
    src, tgt = SmallToy().source_lines("", "train")
    items = [(i, s, t) for i, (s, t) in enumerate(zip(src, tgt, strict=True))]
    serial = list(datagen_lib.encode_examples(items, vocab, num_workers=1))
    pooled = list(
        datagen_lib.encode_examples(
            iter(items), vocab, num_workers=2, chunk_size=7, min_pool_items=0
        )
    )
    assert pooled == serial and len(serial) == 300


def test_progress_line_has_rate_and_eta():
    stream = io.StringIO()
    bar = datagen_lib.Progress("toy train", total=200, stream=stream)
    bar.interval = 0.0
    bar.update(50)
    bar.close()
    out = stream.getvalue()
    assert (
        "toy train: 50/200 lines (25%)" in out
        and "lines/s" in out
        and "ETA" in out
        and "done in" in out
    )


@pytest.mark.skipif(
    not (SHARED_DATA / "t2t" / "trax_wmt32k").is_dir(), reason="../shared/data/t2t absent"
)
def test_reads_real_t2t_shards_through_the_problem_filepattern():
    data_dir = str(SHARED_DATA / "t2t" / "trax_wmt32k")
    problem = registry.problem("translate_ende_wmt32k")
    for split in ("train", "dev"):
        files = sorted(glob.glob(problem.filepattern(data_dir, split)))
        assert [os.path.basename(f) for f in files] == [
            f"translate_ende_wmt32k-{split}-00000-of-00001"
        ]
        examples = records.read_examples(files[0])
        assert examples and all(
            ex["inputs"][-1] == EOS_ID and ex["targets"][-1] == EOS_ID for ex in examples
        )
    encoder = problem.get_encoders(data_dir)["targets"]
    assert encoder.vocab_size == 33288
    text = encoder.decode(examples[0]["targets"], strip_extraneous=True)
    assert len(text.split()) > 1


# ----------------------------------------------------------------------------- the CLI


def _datagen(*args, **env):
    return run_tool("t2t-datagen", *args, timeout=300, env={**os.environ, **env})


@pytest.mark.slow
def test_cli_generates_and_prints_a_summary(tmp_path):
    out = run_tool(
        "t2t-datagen",
        "--problem=algorithmic_copy,algorithmic_reverse",
        f"--data_dir={tmp_path}",
        "--max_cases=30",
        "--num_workers=1",
        env=USER_ENV,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert_quiet(out.stderr)
    for word in (
        "pairs:",
        "train 30",
        "tokens written",
        "vocab size",
        "dropped empty pairs: 0",
        "time:",
    ):
        assert word in out.stdout
    assert os.path.isfile(tmp_path / "algorithmic_reverse-test-00000-of-00001")
    assert os.path.isfile(tmp_path / "vocab.algorithmic_copy.64.subwords")


def test_no_data_dir_writes_to_the_temp_dir_with_t2ts_warning(tmp_path, monkeypatch, capsys):
    from t2t_repro.commands import datagen

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # what gettempdir() returns
    argv = ["--problem=algorithmic_copy", "--max_cases=30", "--num_workers=1", "--noprogress"]
    assert datagen.main(argv) == 0
    assert f"no --data_dir: the data goes to {tmp_path} (T2T's default)" in capsys.readouterr().err
    assert os.path.isfile(tmp_path / "vocab.algorithmic_copy.64.subwords")


@pytest.mark.slow
def test_cli_unknown_problem_and_missing_data_fail_cleanly(tmp_path):
    out = _datagen("--problem=translate_toyy", f"--data_dir={tmp_path}")
    assert out.returncode == 1
    assert "Unknown problem 'translate_toyy'" in out.stderr and "translate_toy" in out.stderr
    assert "Traceback" not in out.stderr
    out = _datagen(
        "--problem=translate_ende_multi30k",
        f"--data_dir={tmp_path}",
        f"--tmp_dir={tmp_path}/raw",
        T2T_REPRO_OFFLINE="1",
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"{tmp_path}/raw/train.en.gz" in out.stderr and "multi30k/dataset" in out.stderr


def test_examples_serialize_deterministically():
    # Feature maps are ordered by key, whatever the insertion order (and hash seed): shards
    # are byte-identical from run to run.
    from t2t_repro.data import records

    names = [f"feature_{i:02d}" for i in range(24)]
    forward = records.serialize_example({n: [i, 1] for i, n in enumerate(names)})
    backward = records.serialize_example({n: [i, 1] for i, n in reversed(list(enumerate(names)))})
    assert forward == backward
    positions = [forward.index(n.encode()) for n in names]
    assert positions == sorted(positions)
