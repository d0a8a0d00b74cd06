"""T2T 1.15.7's own translation problems (translate_envi, _enro, _encs, _enid, _enmk, _enet,
_enes, _entn, and translate_ende's and translate_enfr's beyond the project's WMT classes) under
T2T's names: datagen writes what T2T 1.15.7's writes on the same corpus
files (tests/data/t2t_translate_reference, made by T2T itself:
tools/t2t_reference/make_t2t_translate_reference.py)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat.problem import T2TProblemError
from tests.t2t_records import ids_digest

REFERENCE = Path(__file__).parent / "data" / "t2t_translate_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_translate.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED["problems"]))
def test_datagen_writes_what_t2t_1_15_7_writes(name, tmp_path):
    want = EXPECTED["problems"][name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / name / "tmp", tmp_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    if want["vocab_file"]:
        vocab = (data_dir / want["vocab_file"]).read_bytes()
        assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard) == (count, want["records_sha256"][shard]), shard
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]


def test_the_problems_are_t2ts():
    from t2t_repro.t2t_compat import aliases

    assert aliases.install()
    from tensor2tensor.data_generators import translate_enes, translate_enro

    enro = registry.problem("translate_enro_wmt32k")
    assert isinstance(enro, translate_enro.TranslateEnroWmt8k)  # T2T's class tree
    assert enro.approx_vocab_size == 2**15 and enro.name == "translate_enro_wmt32k"
    assert registry.problem("translate_enes_wmt_characters").vocab_type == "character"
    assert registry.problem("translate_entn_rma").vocab_filename == "vocab.entn.32768"
    assert translate_enes.TranslateEnesWmt8k().vocab_data_files()[0][1] == (
        "commoncrawl.es-en.en",
        "commoncrawl.es-en.es",
    )
    encs = registry.problem("translate_encs_wmt32k").vocab_data_files()  # T2T's compiled tsv
    assert encs[0][1] == [f"translate_encs_wmt32k-compiled-train.lang{i}" for i in (1, 2)]


def test_a_corpus_entry_without_a_url_is_one_line(tmp_path):
    """T2T's compile_data reads every entry's url first (a usr_dir table without one fails
    there with a TypeError); here one line names the compiled files it would read instead."""
    from t2t_repro.t2t_compat.translate import compile_data

    with pytest.raises(T2TProblemError, match="has no url") as refused:
        compile_data(str(tmp_path), [[("a.en", "a.de")]], "mine-compiled-train")
    assert "mine-compiled-train.lang1" in str(refused.value)


def test_the_wmt_variants_share_t2ts_vocabularies(tmp_path, capsys):
    from t2t_repro.t2t_compat.problem import DatasetSplit

    clean = registry.problem("translate_ende_wmt_clean_pc_clean32k")
    assert clean.vocab_filename == "vocab.translate_ende_wmt32k.32768.subwords"
    assert clean.datatypes_to_clean == ["txt", "tmx"]
    assert clean.source_data_files(DatasetSplit.EVAL)[0][1] == (
        "dev/newstest2013.en",
        "dev/newstest2013.de",
    )
    back = registry.problem("translate_enfr_wmt32k_with_backtranslate_en")
    assert back.vocab_filename == "vocab.translate_enfr_wmt32k.32768.subwords"
    assert back.backtranslate_data_filenames[2] == ("en_mono_en.txt2", "en_mono_fr.txt2")
    # T2T's translate_ende2018_wmt32k has no source_data_files: refused before any file
    argv = ["--problem=translate_ende2018_wmt32k", f"--data_dir={tmp_path / 'd'}"]
    assert datagen.main([*argv, "--noprogress"]) != 0
    assert "defines no source_data_files" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
