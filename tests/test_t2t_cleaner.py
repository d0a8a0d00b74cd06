"""T2T 1.15.7's ``cleaner_en_xx`` and the tmx and ``datatypes_to_clean`` paths of its
``translate.compile_data``: the pairs, compiled files and shards equal what T2T itself gives
(tests/data/t2t_cleaner_reference, made by tools/t2t_reference/make_t2t_cleaner_reference.py).

T2T 1.15.7 pairs split sentences with ``itertools.izip`` (Python 2's), which fails on Python 3;
the reference records that failure, and T2T's results with ``izip`` as ``zip``, which is what
is compared here."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.t2t_compat.problem import T2TProblemError
from tests.t2t_records import ids_digest

REFERENCE = Path(__file__).parent / "data" / "t2t_cleaner_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_cleaner.json").read_text(encoding="utf-8"))
PROBLEM = "translate_enes_wmt_clean32k"


def _cleaner():
    from t2t_repro.t2t_compat import aliases

    assert aliases.install()
    from tensor2tensor.data_generators import cleaner_en_xx  # T2T's name, this project's module

    return cleaner_en_xx


def test_clean_en_xx_pairs_gives_t2ts_pairs_for_each_rule():
    cleaner_en_xx, want = _cleaner(), EXPECTED["cleaner"]
    for pair, as_is, cleaned in zip(
        want["pairs"], want["cleaned_as_is"], want["cleaned"], strict=True
    ):
        got = [list(p) for p in cleaner_en_xx.clean_en_xx_pairs([tuple(pair)])]
        assert got == cleaned, pair
        # T2T as it is differs only where Python 3 lacks its izip (a pair split in >1 each).
        assert as_is == cleaned or "izip" in as_is["error"], pair
    everything = cleaner_en_xx.clean_en_xx_pairs(tuple(p) for p in want["pairs"])
    assert [list(p) for p in everything] == want["cleaned_all_at_once"]


def test_paracrawl_v3_pairs_reads_t2ts_pairs_from_a_tmx(capsys):
    cleaner_en_xx, want = _cleaner(), EXPECTED["cleaner"]
    lines = (REFERENCE / "compile" / "para.en-es.tmx").read_bytes().splitlines(keepends=True)
    assert [list(p) for p in cleaner_en_xx.paracrawl_v3_pairs(iter(lines))] == want["tmx_pairs"]
    assert "Unmatched final sentence" in capsys.readouterr().err  # T2T logs it as an error
    cleaned = cleaner_en_xx.clean_en_xx_pairs(cleaner_en_xx.paracrawl_v3_pairs(iter(lines)))
    assert [list(p) for p in cleaned] == want["tmx_pairs_cleaned"]


def test_compile_data_writes_t2ts_files_for_tmx_tsv_txt_and_each_cleaning(tmp_path):
    """Each case of the reference: T2T's compiled lines, or where T2T fails, this project's
    reading of a plain tmx as the gzipped one and one line for an uncleanable .sgm line."""
    from t2t_repro.t2t_compat.translate import compile_data

    datasets = {
        name: [[url, tuple(spec)] for url, spec in entries]
        for name, entries in EXPECTED["compile_datasets"].items()
    }
    by_case = {(c["datasets"], json.dumps(c["datatypes_to_clean"])): c for c in EXPECTED["compile"]}
    for index, case in enumerate(EXPECTED["compile"]):
        name, to_clean, want = case["datasets"], case["datatypes_to_clean"], case["result"]
        tmp = tmp_path / str(index)
        shutil.copytree(REFERENCE / "compile", tmp)
        before = {p.name for p in tmp.iterdir()}
        if name == "tmx_plain":  # T2T 1.15.7 fails on it (str has no decode): read as a .gz
            assert "has no attribute 'decode'" in want["error"]
            want = by_case[("tmx_gz", json.dumps(to_clean))]["result"]
        if name == "sgm" and to_clean:  # T2T's cleaner fails on a non-<seg> line (None)
            assert want["error"].startswith("TypeError")
            with pytest.raises(T2TProblemError, match="no <seg> line") as refused:
                compile_data(str(tmp), datasets[name], "c", to_clean)
            assert "\n" not in str(refused.value)
            assert sorted({p.name for p in tmp.iterdir()} - before) == want["tmp_files_added"]
            continue
        path = Path(compile_data(str(tmp), datasets[name], "c", to_clean))
        for ext in ("lang1", "lang2"):
            got = Path(f"{path}.{ext}").read_text(encoding="utf-8").split("\n")
            assert got == want[ext], (name, to_clean, ext)
        assert sorted({p.name for p in tmp.iterdir()} - before) == want["tmp_files_added"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_translate_enes_wmt_clean32k_datagen_writes_what_t2t_writes(tmp_path):
    """T2T's registered problem: translate_enes_wmt32k's vocabulary (from the uncleaned
    files), its train pairs cleaned, its dev pairs not; the same shards as T2T's."""
    want = EXPECTED["datagen"]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / PROBLEM / "tmp", tmp_dir)
    argv = [f"--problem={PROBLEM}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    assert _sha256(data_dir / want["vocab_file"]) == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard) == (count, want["records_sha256"][shard]), shard
    for name, digest in want["compiled_sha256"].items():
        assert _sha256(tmp_dir / name) == digest, name
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]


def test_the_clean_problem_and_the_cleaner_are_t2ts_names():
    register_builtins()
    cleaner_en_xx = _cleaner()
    from tensor2tensor.data_generators import translate, translate_enes

    problem = registry.problem(PROBLEM)
    assert isinstance(problem, translate_enes.TranslateEnesWmtClean32k)
    assert isinstance(problem, translate_enes.TranslateEnesWmt32k)  # T2T's class tree
    assert problem.datatypes_to_clean == ["txt"]
    assert problem.vocab_filename == "vocab.translate_enes_wmt32k.32768.subwords"
    assert translate.TranslateProblem().datatypes_to_clean is None
    assert sorted(cleaner_en_xx.__all__) == ["clean_en_xx_pairs", "paracrawl_v3_pairs"]
