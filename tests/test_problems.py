"""The registered problems: names, sources (generated, Multi30k, WMT local and tfds), custom
corpora."""

from __future__ import annotations

import glob
import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.builtin.problems import translate_multi30k
from t2t_repro.builtin.problems.algorithmic import NOUNS, VERBS, toy_corpus
from t2t_repro.builtin.problems.base import DataError, Text2TextProblem
from t2t_repro.builtin.problems.parallel_corpus import register_parallel_corpus
from t2t_repro.data import records
from t2t_repro.text_encoding.reserved_tokens import EOS_ID
from tests.loopback_http import serving

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MULTI30K = SHARED_DATA / "multi30k"


def _decoded(problem, data_dir, split):
    encoder = problem.get_encoders(str(data_dir))["inputs"]
    out = []
    for path in sorted(glob.glob(problem.filepattern(str(data_dir), split))):
        for ex in records.read_examples(path):
            assert ex["inputs"][-1] == EOS_ID and ex["targets"][-1] == EOS_ID
            out.append((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1])))
    return sorted(out)


def test_registered_names_and_t2t_vocab_file_names():
    names = registry.list_names(registry.PROBLEMS)
    for name in (
        "algorithmic_copy",
        "algorithmic_reverse",
        "translate_toy",
        "translate_toy_rev",
        "translate_ende_multi30k",
        "translate_enfr_multi30k",
        "wmt_ende",
        "wmt_enfr",
        "translate_ende_wmt32k",
        "translate_enfr_wmt32k",
        "parallel_corpus",
        "translate_ende_wmt32k_rev",
    ):
        assert name in names
        assert registry.problem(name).name == name
    p = registry.problem("translate_ende_wmt32k")
    assert p.vocab_filename == "vocab.translate_ende_wmt32k.32768.subwords"
    assert (
        p.num_shards == {"train": 100, "dev": 1}  # T2T's: no test split
        and p.has_inputs
        and p.target_space_id == 0
    )
    assert "bleu" in p.eval_metrics
    # T2T's problems of these names report Text2TextProblem.eval_metrics (text_problems.py):
    # top-5 accuracy, ROUGE and approximate BLEU as well; the paper's wmt_ende is our own.
    t2t_top5_rouge = ("accuracy_top5", "rouge_2_fscore", "rouge_L_fscore", "approx_bleu_score")
    for name in ("translate_ende_wmt32k", "translate_ende_wmt8k_rev", "translate_enfr_wmt8k"):
        assert registry.problem(name).teacher_forced_metrics() == t2t_top5_rouge, name
    assert registry.problem("wmt_ende").teacher_forced_metrics() == ()
    assert (
        registry.problem("translate_ende_multi30k").vocab_filename
        == "vocab.translate_ende_multi30k.8192.subwords"
    )
    enfr8k = registry.problem("translate_enfr_wmt8k")  # T2T's: the full EN-FR data, 2**13
    assert enfr8k.vocab_filename == "vocab.translate_enfr_wmt8k.8192.subwords"
    assert enfr8k.num_shards == {"train": 100, "dev": 1}
    rev = registry.problem("translate_ende_wmt32k_rev")
    assert rev.vocab_filename == p.vocab_filename
    # T2T's _rev reads its problem's files (swapped as they are read: below)
    assert rev.filepattern("/d", "train") == "/d/translate_ende_wmt32k-train-*"


def test_get_encoders_without_vocab_says_run_datagen(tmp_path):
    with pytest.raises(DataError, match="t2t-datagen --problem=translate_toy"):
        registry.problem("translate_toy").get_encoders(str(tmp_path))


def test_algorithmic_pairs():
    copy, rev = registry.problem("algorithmic_copy"), registry.problem("algorithmic_reverse")
    src, tgt = copy.source_lines("", "test")
    assert len(src) == 500 and src == tgt and set(" ".join(src).split()) <= set(copy.symbols)
    src, tgt = rev.source_lines("", "dev")
    assert [s.split()[::-1] for s in src] == [t.split() for t in tgt]
    assert rev.source_lines("", "dev") == (src, tgt)  # fixed seed


def test_toy_translation_has_structure_and_disjoint_splits():
    corpus = toy_corpus({"train": 2000, "dev": 100, "test": 100}, seed=7)
    assert corpus == toy_corpus({"train": 2000, "dev": 100, "test": 100}, seed=7)
    train_src = {s for s, _ in corpus["train"]}
    assert not train_src & {s for s, _ in corpus["test"]} and not train_src & {
        s for s, _ in corpus["dev"]
    }
    verbs_b = set(VERBS.values())
    for src, tgt in corpus["train"]:
        a, b = src.split(), tgt.split()
        verb = next(w for w in a if w in VERBS)
        subject_plural = a[a.index(verb) - 1].endswith("s") and a[a.index(verb) - 1][:-1] in NOUNS
        assert b[-2] == VERBS[verb] + ("n" if subject_plural else "")  # verb-final, agreeing
        assert sum(w.rstrip("n") in verbs_b or w in verbs_b for w in b) == 1
        assert len(a) == len(b)  # word-for-word (reordered) translation
    problem = registry.problem("translate_toy")
    src, tgt = problem.source_lines("", "test")
    assert len(src) == len(tgt) == 500 and all(s.endswith(" .") for s in src)
    assert registry.problem("translate_toy_rev").source_lines("", "test") == (tgt, src)


def test_translate_toy_rev_reads_its_problems_files_swapped(tmp_path):
    """T2T's _rev: the problem's own files, inputs and targets swapped after the record's
    truncation (problem.py: maybe_reverse_features after preprocess); its datagen writes the
    problem's files, which it then keeps."""
    from t2t_repro.data.input_pipeline import EVAL, make_dataset
    from t2t_repro.hparams_lib.build import create_hparams

    rev_problem = registry.problem("translate_toy_rev")
    rev = rev_problem.generate_data(str(tmp_path), "", 1, max_cases=50, progress=False)
    assert rev.vocab_built and rev.shards_written
    again = rev_problem.generate_data(str(tmp_path), "", 1, max_cases=50, progress=False)
    assert not again.vocab_built and not again.shards_written
    assert glob.glob(str(tmp_path / "translate_toy-test-*"))
    assert not glob.glob(str(tmp_path / "translate_toy_rev*"))
    written = [  # the records as translate_toy wrote them
        (list(ex["inputs"]), list(ex["targets"]))
        for path in sorted(glob.glob(str(tmp_path / "translate_toy-test-*")))
        for ex in records.read_examples(path)
    ]
    hp = create_hparams("transformer_tiny", "max_input_seq_length=3")
    read = make_dataset(
        rev_problem.filepattern(str(tmp_path), "test"),
        EVAL,
        hp,
        read_example=rev_problem.read_example_fn(EVAL, hp),
    ).unbatch()
    unpadded = [
        ([int(i) for i in ex["inputs"] if i], [int(i) for i in ex["targets"] if i]) for ex in read
    ]
    # The record's inputs cut to 3 ids (T2T's truncation, before the swap) are the targets.
    assert sorted(unpadded) == sorted((t, s[:3]) for s, t in written)


# ----------------------------------------------------------------------------- Multi30k


def _multi30k_slice(dest: Path, langs=("en", "de"), n=200):
    for stem in ("train", "val", "test_2016_flickr"):
        for lang in langs:
            with gzip.open(MULTI30K / f"{stem}.{lang}.gz", "rt", encoding="utf-8") as f:
                lines = [next(f) for _ in range(n if stem == "train" else n // 4)]
            with gzip.open(dest / f"{stem}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.writelines(lines)


@pytest.mark.skipif(not MULTI30K.is_dir(), reason="../shared/data/multi30k absent")
def test_multi30k_small_slice(tmp_path, monkeypatch):
    monkeypatch.setenv("T2T_REPRO_OFFLINE", "1")
    raw = tmp_path / "raw"
    raw.mkdir()
    _multi30k_slice(raw)
    problem = registry.problem("translate_ende_multi30k")
    summary = problem.generate_data(str(tmp_path / "data"), str(raw), num_workers=2, progress=False)
    assert summary.pairs == {"train": 200, "dev": 50, "test": 50}
    assert os.path.isfile(tmp_path / "data" / "vocab.translate_ende_multi30k.8192.subwords")
    assert len(glob.glob(problem.filepattern(str(tmp_path / "data"), "train"))) == 10
    src, tgt = problem.source_lines(str(raw), "test")
    assert src[0].startswith("A ") and tgt[0].startswith("Ein")  # English -> German captions
    assert _decoded(problem, tmp_path / "data", "test") == sorted(zip(src, tgt, strict=True))


def test_multi30k_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("T2T_REPRO_OFFLINE", "1")
    problem = registry.problem("translate_enfr_multi30k")
    with pytest.raises(DataError) as e:
        problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    assert str(tmp_path / "train.en.gz") in str(e.value) and "data/task1/raw" in str(e.value)
    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    with serving(b"") as server:  # online: the download (a 404 here) says the same in one line
        monkeypatch.setattr(translate_multi30k, "RAW_URL", server.url + "/missing/{}")
        with pytest.raises(DataError) as e:
            problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    message = str(e.value)
    assert (
        "\n" not in message and "HTTP 404" in message and str(tmp_path / "train.en.gz") in message
    )
    assert server.requests == [("/missing/train.en.gz", None)]
    captions = {
        f"val.{lang}.gz": gzip.compress(f"{lang} caption\n".encode()) for lang in ("en", "fr")
    }
    with serving(captions) as server:  # and a download that works gives the split's files
        monkeypatch.setattr(translate_multi30k, "RAW_URL", server.url + "/full/{}")
        assert problem.source_lines(str(tmp_path / "new"), "dev") == (
            ["en caption"],
            ["fr caption"],
        )
    assert sorted(os.listdir(tmp_path / "new")) == ["val.en.gz", "val.fr.gz"]


# ----------------------------------------------------------------------------- WMT


def _tgz(path: Path, members: dict, mode="w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, text in members.items():
            data = text.encode("utf-8") if isinstance(text, str) else text
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _lines(prefix, n):
    return "".join(f"{prefix} {i} .\n" for i in range(n))


def test_wmt_t2t_mix_from_fake_tarballs(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    _tgz(
        raw / "training-parallel-nc-v13.tgz",
        {
            "training-parallel-nc-v13/news-commentary-v13.de-en.en": _lines("news", 5),
            "training-parallel-nc-v13/news-commentary-v13.de-en.de": _lines("nachricht", 5),
            "training-parallel-nc-v13/news-commentary-v13.cs-en.en": _lines("other", 2),
        },
    )
    _tgz(
        raw / "training-parallel-commoncrawl.tgz",
        {"commoncrawl.de-en.en": _lines("crawl", 4), "commoncrawl.de-en.de": _lines("kriechen", 4)},
    )
    _tgz(
        raw / "training-parallel-europarl-v7.tgz",
        {
            "training/europarl-v7.de-en.en": _lines("parliament", 3) + "\n",
            "training/europarl-v7.de-en.de": _lines("parlament", 3) + "leer\n",
        },
    )

    def seg(words):
        return (
            "<refset>\n"
            + "".join(f'<seg id="{i}">{w}</seg>\n' for i, w in enumerate(words))
            + "</refset>\n"
        )

    _tgz(
        raw / "dev.tgz",
        {
            "dev/newstest2013.en": "dev one\ndev two\n",
            "dev/newstest2013.de": "dev eins\ndev zwei\n",
            "dev/newstest2014-deen-src.en.sgm": seg(["test one", "test two", "test three"]),
            "dev/newstest2014-deen-ref.de.sgm": seg(["test eins", "test zwei", "test drei"]),
        },
    )
    problem = registry.problem("translate_ende_wmt32k")
    summary = problem.generate_data(str(tmp_path / "data"), str(raw), progress=False)
    # T2T's dataset_splits: train and eval (newstest2013); the tarball's newstest2014 unread
    assert summary.pairs == {"train": 12, "dev": 2} and summary.dropped_empty == 1
    assert os.path.isfile(raw / "training" / "europarl-v7.de-en.de")  # extracted as T2T does
    src, tgt = problem.source_lines(str(raw), "train")
    assert (
        src[0] == "news 0 ."
        and tgt[0] == "nachricht 0 ."
        and src[-1] == "parliament 2 ."
        and len(src) == 12
    )
    assert _decoded(problem, tmp_path / "data", "dev") == sorted(
        zip(*problem.source_lines(str(raw), "dev"), strict=True)
    )
    # the paper's wmt_ende tests on newstest2014, read from the same tarball's SGM files
    assert registry.problem("wmt_ende").source_lines(str(raw), "test") == (
        ["test one", "test two", "test three"],
        ["test eins", "test zwei", "test drei"],
    )
    assert len(glob.glob(problem.filepattern(str(tmp_path / "data"), "train"))) == 100
    rev_src, rev_tgt = registry.problem("translate_ende_wmt32k_rev").source_lines(str(raw), "dev")
    assert rev_src == ["dev eins", "dev zwei"] and rev_tgt == ["dev one", "dev two"]


def test_wmt14_from_plain_and_tsv_files(tmp_path):
    raw = tmp_path
    # news-commentary as statmt's TSV: German first, as the stem's pair says
    (raw / "news-commentary-v9.de-en.tsv").write_text(
        "Hallo\tHello\nWelt\tWorld\n", encoding="utf-8"
    )
    (raw / "commoncrawl.de-en.en").write_text("crawl a\ncrawl b\n")
    (raw / "commoncrawl.de-en.de").write_text("kriechen a\nkriechen b\n")
    for lang, word in (("en", "parliament"), ("de", "parlament")):
        with gzip.open(raw / f"europarl-v7.de-en.{lang}.gz", "wt") as f:
            f.write(f"{word}\n")
    (raw / "newstest2013.en").write_text("dev\n")
    (raw / "newstest2013.de").write_text("entw\n")
    (raw / "newstest2014-deen.en").write_text("test\n")
    (raw / "newstest2014-deen.de").write_text("pruef\n")
    problem = registry.problem("wmt_ende")
    src, tgt = problem.source_lines(str(raw), "train")
    assert src == ["Hello", "World", "crawl a", "crawl b", "parliament"]
    assert tgt == ["Hallo", "Welt", "kriechen a", "kriechen b", "parlament"]
    summary = problem.generate_data(str(tmp_path / "data"), str(raw), progress=False)
    assert summary.pairs == {"train": 5, "dev": 1, "test": 1}
    assert _decoded(problem, tmp_path / "data", "test") == [("test", "pruef")]


def test_wmt_partial_local_data_names_what_is_missing(tmp_path):
    (tmp_path / "commoncrawl.de-en.en").write_text("a\n")
    (tmp_path / "commoncrawl.de-en.de").write_text("b\n")
    with pytest.raises(DataError) as e:
        registry.problem("wmt_ende").split_sources(str(tmp_path), "train")
    assert "news-commentary-v9.de-en.en" in str(
        e.value
    ) and "training-parallel-europarl-v7.tgz" in str(e.value)


def test_wmt_partial_local_data_downloads_the_rest_as_t2t(tmp_path, monkeypatch):
    """Online, the missing corpora's archives are fetched into tmp_dir (a loopback server
    stands in for statmt.org) and read as if they had been there."""
    from t2t_repro.builtin.problems import translate_wmt

    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    (tmp_path / "commoncrawl.de-en.en").write_text("crawl\n")
    (tmp_path / "commoncrawl.de-en.de").write_text("kriechen\n")
    archive = tmp_path / "served.tgz"
    _tgz(
        archive,
        {"training/europarl-v7.de-en.en": "house\n", "training/europarl-v7.de-en.de": "Haus\n"},
    )
    with serving({"training-parallel-europarl-v7.tgz": archive.read_bytes()}) as server:
        europarl = translate_wmt._corpus(
            "europarl-v7.de-en",
            "de-en",
            "training-parallel-europarl-v7.tgz",
            f"{server.url}/full/training-parallel-europarl-v7.tgz",
            "training/europarl-v7.de-en.{lang}",
        )
        problem = registry.problem("wmt_ende")
        monkeypatch.setattr(
            problem, "corpora", {"train": (translate_wmt._commoncrawl("de-en"), europarl)}
        )
        src, tgt = problem.source_lines(str(tmp_path), "train")
    assert (src, tgt) == (["crawl", "house"], ["kriechen", "Haus"])
    assert (tmp_path / "training-parallel-europarl-v7.tgz").read_bytes() == archive.read_bytes()
    assert [path for path, _ in server.requests] == ["/full/training-parallel-europarl-v7.tgz"]


@pytest.mark.slow
def test_wmt_from_tfds_mock_data(tmp_path, monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    # mock_data prepares nothing; offline (conftest.py), tfds_source would refuse it
    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    with tfds.testing.mock_data(num_examples=12, policy=tfds.testing.MockPolicy.USE_CODE):
        expected = [
            (ex["en"].decode(), ex["de"].decode())
            for ex in tfds.as_numpy(tfds.load("wmt14_translate/de-en", split="test"))
        ]
        problem = registry.problem("wmt_ende")
        summary = problem.generate_data(
            str(tmp_path / "data"), str(tmp_path / "empty"), progress=False
        )
        src, tgt = problem.source_lines(str(tmp_path / "empty"), "test")
    assert summary.pairs == {"train": 12, "dev": 12, "test": 12}
    assert list(zip(src, tgt, strict=True)) == [(s.strip(), t.strip()) for s, t in expected]
    assert _decoded(problem, tmp_path / "data", "test") == sorted(zip(src, tgt, strict=True))


def test_wmt_tfds_offline_without_prepared_data_explains(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow_datasets")
    monkeypatch.setenv("T2T_REPRO_OFFLINE", "1")
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    problem = registry.problem("translate_enfr_wmt32k")
    with pytest.raises(DataError) as e:
        problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    message = str(e.value)
    assert "wmt14_translate/fr-en" in message and "giga-fren.release2.fixed.en" in message
    assert "training-parallel-un.tgz" in message


# ----------------------------------------------------------------------------- your own corpus


def test_parallel_corpus_reads_src_tgt_and_tsv(tmp_path, monkeypatch):
    monkeypatch.setenv("T2T_PARALLEL_CORPUS_VOCAB_SIZE", "300")
    monkeypatch.setenv("T2T_PARALLEL_CORPUS_TRAIN_SHARDS", "2")
    (tmp_path / "train.src").write_text("one two\nthree\n")
    (tmp_path / "train.tgt").write_text("eins zwei\ndrei\n")
    with gzip.open(tmp_path / "test.tsv.gz", "wt") as f:
        f.write("four\tvier\n")
    problem = registry.problem("parallel_corpus")
    assert problem.vocab_filename == "vocab.parallel_corpus.300.subwords"
    summary = problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    assert summary.pairs == {"train": 2, "test": 1}  # no dev files: no dev split
    assert sorted(os.listdir(tmp_path / "data")) == [
        "parallel_corpus-test-00000-of-00001",
        "parallel_corpus-train-00000-of-00002",
        "parallel_corpus-train-00001-of-00002",
        "parallel_corpus.datagen.json",
        "vocab.parallel_corpus.300.subwords",
    ]
    assert problem.source_lines(str(tmp_path), "test") == (["four"], ["vier"])


def test_register_parallel_corpus_helper(tmp_path):
    (tmp_path / "a.xx").write_text("alpha\nbeta\n")
    (tmp_path / "a.yy").write_text("ALPHA\nBETA\n")
    (tmp_path / "b.tsv").write_text("gamma\tGAMMA\n")
    (tmp_path / "dev.tsv").write_text("delta\tDELTA\n")
    cls = register_parallel_corpus(
        "translate_xxyy_test_helper",
        train=[("a.xx", "a.yy"), "b.tsv"],
        dev=str(tmp_path / "dev.tsv"),
        vocab_size=100,
        train_shards=1,
    )
    problem = registry.problem("translate_xxyy_test_helper")
    assert isinstance(problem, cls) and isinstance(problem, Text2TextProblem)
    assert problem.splits == ("train", "dev")
    assert problem.vocab_filename == "vocab.translate_xxyy_test_helper.100.subwords"
    summary = problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    assert summary.pairs == {"train": 3, "dev": 1}
    assert _decoded(problem, tmp_path / "data", "train") == [
        ("alpha", "ALPHA"),
        ("beta", "BETA"),
        ("gamma", "GAMMA"),
    ]
    rev = registry.problem("translate_xxyy_test_helper_rev")
    assert rev.source_lines(str(tmp_path), "dev") == (["DELTA"], ["delta"])


def test_usr_dir_module_registers_a_corpus(tmp_path):
    from t2t_repro.usr_dir import import_usr_dir

    (tmp_path / "my_t2t_problems_for_test.py").write_text(
        "from t2t_repro.builtin.problems.parallel_corpus import register_parallel_corpus\n"
        "register_parallel_corpus('translate_usr_dir_test', train=('t.a', 't.b'), with_rev=False)\n"
    )
    import_usr_dir(str(tmp_path / "my_t2t_problems_for_test.py"))
    assert registry.problem("translate_usr_dir_test").splits == ("train",)
    with pytest.raises(FileNotFoundError):
        import_usr_dir(str(tmp_path / "nope"))
