"""T2T 1.15.7's DeepMind mathematics, AlgoLisp program search, GitHub function/docstring and
Description2Code problems under T2T's names: datagen writes what T2T 1.15.7's writes from the
same files, with T2T's problem hparams and metrics; Description2Code's datagen, which fails in
T2T, is refused in one line (tests/data/t2t_code_math_reference, made by T2T itself:
tools/t2t_reference/make_t2t_code_math_reference.py)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import (
    algorithmic_math_deepmind,
    desc2code,
    function_docstring,
    program_search,
)
from t2t_repro.t2t_compat.problem import T2TProblemError, default_model_hparams
from tests.t2t_records import ids_digest

REFERENCE = Path(__file__).parent / "data" / "t2t_code_math_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_code_math.json").read_text(encoding="utf-8"))
EXPECTED = SUMMARY["problems"]
MODULES = {
    module.__name__.rsplit(".", 1)[-1]: module.T2T_REGISTERED_PROBLEMS
    for module in (algorithmic_math_deepmind, program_search, function_docstring, desc2code)
}
DESC2CODE = sorted(n for n in EXPECTED if "error" in EXPECTED[n])


@pytest.fixture(autouse=True)
def _registered():
    """The classes registered again, should a test before have restored the registry."""
    for classes in MODULES.values():
        for cls in classes:
            registry.register_problem(cls.problem_name)(cls)


def _hparams(name: str, data_dir: Path) -> dict:
    model_hparams = default_model_hparams()
    model_hparams.data_dir = str(data_dir)
    hp = registry.problem(name).get_hparams(model_hparams)
    got = {key: hp.get(key) for key in EXPECTED[name]["problem_hparams"]}
    return {**got, "modality": dict(hp.modality), "vocab_size": dict(hp.vocab_size)}


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if "error" not in EXPECTED[n]))
def test_datagen_records_and_hparams_are_t2t_1_15_7s(name, tmp_path):
    want = EXPECTED[name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0

    shards = {
        f"{name}-{split}-{i:05d}-of-{len(counts):05d}": count
        for split, counts in want["shard_records"].items()
        for i, count in enumerate(counts)
    }
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == sorted([*want["other_files"], *shards])
    if want["vocab_file"]:
        vocab = (data_dir / want["vocab_file"]).read_bytes()
        assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    written = {shard: ids_digest(data_dir / shard, None) for shard in shards}
    assert {s: n for s, (n, _) in written.items()} == shards
    assert {s: d for s, (n, d) in written.items() if n} == want["records_sha256"]
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]

    problem = registry.problem(name)
    assert _hparams(name, data_dir) == want["problem_hparams"]
    assert type(problem).__name__ == want["class"]
    assert problem.eval_metrics() == want["eval_metrics"]
    assert problem.vocab_type == want["vocab_type"]
    assert [dict(s) for s in problem.dataset_splits] == want["dataset_splits"]
    assert problem.problem_hparams(str(data_dir))  # what the trainer asks


@pytest.mark.parametrize("name", DESC2CODE)
def test_desc2code_datagen_fails_in_t2t_and_is_refused_in_one_line(name, tmp_path, capsys):
    assert EXPECTED[name]["error"] == "AssertionError"  # T2T's datagen
    argv = [f"--problem={name}", f"--tmp_dir={REFERENCE / 'tmp'}", f"--data_dir={tmp_path}"]
    assert datagen.main([*argv, "--offline", "--noprogress"]) != 0
    err = capsys.readouterr().err.strip()
    assert "cannot run" in err and "vocab.endefr.32768" in err and "\n" not in err
    assert not list(tmp_path.glob(f"{name}-*"))
    with pytest.raises(T2TProblemError, match="is missing"):
        registry.problem(name).get_hparams(default_model_hparams())
    # records made otherwise train, with T2T's two vocabularies in data_dir
    vocabs = {"vocab.endefr.32768": "the_ a_ list_ e t h", "vocab.py.4096": "print_ (_ )_ p r i"}
    vocabs["vocab.cpp.4096"] = "int_ main_ {_ }_ i n"
    for vocab, subtokens in vocabs.items():
        lines = ["<pad>_", "<EOS>_", *subtokens.split(), "_"]
        (tmp_path / vocab).write_text("".join(f"'{s}'\n" for s in lines), encoding="utf-8")
    assert _hparams(name, tmp_path) == EXPECTED[name]["problem_hparams"]
    assert registry.problem(name).eval_metrics() == EXPECTED[name]["eval_metrics"]


def test_desc2code_generator_samples_and_targets_are_t2ts(tmp_path):
    shutil.copy(REFERENCE / "tmp" / "description2code_current.zip", tmp_path)
    py = list(desc2code.generator_samples(str(tmp_path), desc2code.PB_PY))
    cpp = list(desc2code.generator_samples(str(tmp_path), desc2code.PB_CPP))
    assert len(py) == len(cpp) == 6
    # each challenge's one solution kept, the Java one (challenge p1's 2.txt) dropped
    assert [len(s.code_files) for s in py] == [len(s.code_files) for s in cpp] == [1] * 6
    assert all(s.desc_file.endswith("/description/description.txt") for s in py)
    assert sum(len(list(Path(s.code_files[0]).parent.iterdir())) for s in cpp) == 8
    cpp_problem = registry.problem("programming_desc2code_cpp")
    assert cpp_problem.preprocess_target("int a; // x\n  int b;\n") == "int a; int b;"
    assert registry.problem("programming_desc2code_py").preprocess_target("\tx") == "    x"


def test_the_names_and_classes_are_t2ts():
    assert SUMMARY["algorithmic_math_deepmind_all_python3_error"] == "TypeError"
    for module, names in SUMMARY["registered"].items():
        assert sorted(cls.problem_name for cls in MODULES[module]) == names, module
        for name in names:
            assert type(registry.problem(name)).__name__ == EXPECTED[name]["class"]
    assert isinstance(registry.problem("programming_desc2code_py"), desc2code.Desc2CodeProblem)
