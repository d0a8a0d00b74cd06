"""T2T 1.15.7's ``translate_enzh_wmt32k`` and ``translate_enzh_wmt8k`` (``translate_enzh.py``;
t2t_compat/translate_enzh.py) under T2T's names: datagen writes what T2T 1.15.7's writes on the
same archives (both subword vocabularies byte for byte, each shard's record ids, the compiled
files left in --tmp_dir), alone and in one ``translate_enzh*`` run (where T2T's 8k problem reads
the corpora the 32k run added to its module list); the encoders are T2T's two, and the tools
read them (tests/data/t2t_enzh_reference, made by T2T itself:
tools/t2t_reference/make_t2t_enzh_reference.py)."""

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data.text_files import DataError
from tests.t2t_records import ids_digest, problem_facts, record_ids
from tests.usr_dir_registry import restored_registry

REFERENCE = Path(__file__).parent / "data" / "t2t_enzh_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_enzh.json").read_text(encoding="utf-8"))
CASES, PROBLEMS = EXPECTED["cases"], EXPECTED["problems"]
FLAGS = ["--offline", "--noprogress", "--num_workers=1"]
BOTH = "translate_enzh*"  # t2t-datagen's pattern: translate_enzh_wmt32k, then _wmt8k


@pytest.fixture(scope="module")
def enzh():
    """The module, its problems registered for this test module only (as
    ``aliases._register_t2t_problems`` registers T2T's), and its corpus list as imported."""
    restore = restored_registry(set())
    next(restore)
    from t2t_repro.t2t_compat import translate_enzh

    for cls in translate_enzh.T2T_REGISTERED_PROBLEMS:
        registry.register_problem(cls.problem_name)(cls)
    pristine = copy.deepcopy(translate_enzh._NC_TRAIN_DATASETS)
    yield translate_enzh
    translate_enzh._NC_TRAIN_DATASETS[:] = pristine
    next(restore, None)


def _fresh(enzh) -> None:
    """The module's News Commentary list as a fresh process has it (T2T's runs are each a
    process; the reference script resets it the same way)."""
    enzh._NC_TRAIN_DATASETS[:] = copy.deepcopy(EXPECTED["datasets"]["NC_TRAIN"])


def _datagen(enzh, root: Path, problem: str) -> tuple[Path, Path]:
    """t2t-datagen of ``problem`` on a copy of the reference archives."""
    _fresh(enzh)
    tmp_dir, data_dir = root / "tmp", root / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    argv = [f"--problem={problem}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, *FLAGS]) == 0
    return data_dir, tmp_dir


@pytest.fixture(scope="module")
def runs(enzh, tmp_path_factory) -> dict:
    """{case: (data dir, tmp dir, the module list's length after)} of the two datagen runs;
    the 32k problem's files are those of the ``translate_enzh*`` run."""
    found = {}
    for case in ("translate_enzh_wmt8k", BOTH):
        data_dir, tmp_dir = _datagen(enzh, tmp_path_factory.mktemp("enzh"), case)
        found[case] = (data_dir, tmp_dir, len(enzh._NC_TRAIN_DATASETS))
    _fresh(enzh)
    return found


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("case", ["translate_enzh_wmt8k", BOTH])
def test_datagen_writes_what_t2t_1_15_7_writes(case, runs):
    want = CASES[case]
    data_dir, tmp_dir, nc_after = runs[case]
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    for name, digest in want["vocab_sha256"].items():  # the .en and .zh vocabularies
        assert _sha256(data_dir / name) == digest, name
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard) == (count, want["records_sha256"][shard]), shard
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]
    for name, digest in want["compiled_sha256"].items():  # wmt_enzh_<size>k_tok_<split>
        assert _sha256(tmp_dir / name) == digest, name
    assert nc_after == want["nc_train_datasets_after"]  # T2T's list, extended in place


def test_the_32k_run_alone_is_the_32k_part_of_the_pattern_run():
    """What the pattern run checks of the 32k problem is all of T2T's 32k run alone (T2T
    seeds each problem: its files do not depend on what ran before it)."""
    alone, both = CASES["translate_enzh_wmt32k"], CASES[BOTH]
    assert set(alone["files"]) <= set(both["files"])
    for key in ("vocab_sha256", "records_sha256", "compiled_sha256"):
        assert alone[key].items() <= both[key].items(), key
    # in the pattern run the 8k problem read CWMT and UN (twice): its files differ
    eight_alone = CASES["translate_enzh_wmt8k"]["vocab_sha256"].items()
    assert eight_alone.isdisjoint(both["vocab_sha256"].items())


def test_the_corpora_are_t2ts(enzh, tmp_path):
    for name, want in EXPECTED["datasets"].items():
        found = getattr(enzh, f"_{name}_DATASETS")
        if name == "NC_TRAIN":
            found = copy.deepcopy(EXPECTED["datasets"]["NC_TRAIN"])  # the list as imported
        assert [[url, list(files)] for url, files in found] == want, name
    assert enzh.get_filename(enzh._CWMT_TRAIN_DATASETS) == "cwmt.tgz"
    assert enzh.get_filename(enzh._UN_TRAIN_DATASETS) == "UNv1.0.en-zh.tar.gz"
    _fresh(enzh)
    assert enzh.TranslateEnzhWmt32k().get_training_dataset(str(tmp_path)) == [
        *EXPECTED["datasets"]["NC_TRAIN"]
    ]
    (tmp_path / "cwmt.tgz").write_bytes(b"")  # an archive there is a corpus to read
    got = enzh.TranslateEnzhWmt32k().get_training_dataset(str(tmp_path))
    assert got is enzh._NC_TRAIN_DATASETS and len(got) == 1 + 24  # T2T's aliasing
    assert enzh.TranslateEnzhWmt8k().get_training_dataset(str(tmp_path)) is got
    _fresh(enzh)


def _facts(problem, data_dir: Path) -> dict:
    """What the reference script records of T2T's problem, asked the same way: the shared
    facts (``tests/t2t_records.py``) and the two vocabularies'."""
    encoders = problem.feature_encoders(str(data_dir))
    return {
        **problem_facts(problem, data_dir),
        "source_vocab_name": problem.source_vocab_name,
        "target_vocab_name": problem.target_vocab_name,
        "encoders": {k: type(e).__name__ for k, e in sorted(encoders.items())},
        "encodings": {
            k: [encoders[k].encode(s) for s in sentences]
            for k, sentences in EXPECTED["sentences"].items()
        },
    }


def _data_dir(runs, name: str) -> Path:
    """The data dir of ``name`` as T2T's run of it alone wrote it."""
    return runs["translate_enzh_wmt8k" if name.endswith("8k") else BOTH][0]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_encoders_and_problem_hparams_are_t2ts(name, runs):
    problem = registry.problem(name)
    classes = {
        "translate_enzh_wmt32k": "TranslateEnzhWmt32k",
        "translate_enzh_wmt8k": "TranslateEnzhWmt8k",
    }
    assert problem.name == name and type(problem).__name__ == classes[name]
    assert _facts(problem, _data_dir(runs, name)) == PROBLEMS[name]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_trainer_and_decoder_read_the_two_vocabularies(name, runs):
    """t2t-trainer's hparams (its input and target vocab sizes, each side's), the decoder's
    encoders (each side its own), and the dev texts it decodes: T2T's dev records'."""
    from t2t_repro.hparams_lib.build import create_run_hparams

    data_dir = _data_dir(runs, name)
    tmp_dir = runs["translate_enzh_wmt8k" if name.endswith("8k") else BOTH][1]
    want = PROBLEMS[name]["vocab_size"]
    problem = registry.problem(name)
    hp = create_run_hparams(problem, str(data_dir), "transformer_tiny")
    assert (hp.input_vocab_size, hp.target_vocab_size) == (want["inputs"], want["targets"])
    assert want["inputs"] != want["targets"]
    encoders = problem.get_encoders(str(data_dir))
    sources, references = problem.source_lines(str(tmp_dir), "dev")
    assert len(sources) == CASES[name]["records"][f"{name}-dev-00000-of-00001"]
    encoded = sorted(
        [encoders["inputs"].encode(s) + [1], encoders["targets"].encode(t) + [1]]
        for s, t in zip(sources, references, strict=True)
    )
    assert encoded == sorted(record_ids(data_dir / f"{name}-dev-00000-of-00001"))
    rev = registry.problem(f"{name}_rev").get_encoders(str(data_dir))  # T2T's ZH to EN
    assert rev["inputs"].vocab_size == want["targets"]
    assert rev["targets"].vocab_size == want["inputs"]


def test_missing_vocabularies_and_archives_are_one_line(enzh, tmp_path, capsys):
    problem = registry.problem("translate_enzh_wmt8k")
    with pytest.raises(DataError, match=r"vocab.translate_enzh_wmt8k.8192.subwords.en not found"):
        problem.feature_encoders(str(tmp_path))
    _fresh(enzh)
    argv = ["--problem=translate_enzh_wmt8k", f"--tmp_dir={tmp_path / 't'}"]
    assert datagen.main([*argv, f"--data_dir={tmp_path / 'd'}", *FLAGS]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "training-parallel-nc-v13.tgz" in err, err
