"""T2T 1.15.7's datagen-time packing (``packed_length``): ``data/example_packing.py``'s
``pack_examples`` packs as T2T's ``generator_utils.pack_examples`` does, the packed problems of
``t2t_compat/packed_problems.py`` are T2T's classes, their datagen and a usr_dir's packed
``Text2TextProblem``'s write T2T's records (tests/data/t2t_packed_reference, made by T2T itself:
tools/t2t_reference/make_t2t_packed_reference.py)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data.example_packing import pack_examples
from t2t_repro.t2t_compat.hparam import HParams
from tests.t2t_records import ids_digest, record_ids
from tests.usr_dir_registry import restored_registry

REFERENCE = Path(__file__).parent / "data" / "t2t_packed_reference"
T2T = json.loads((REFERENCE / "t2t_1.15.7_packed.json").read_text(encoding="utf-8"))
USR_DIR = REFERENCE / "t2t_usr_dir_packed"
WIKI64K = REFERENCE / "translate_ende" / "wiki64k_vocab"
TMP = {  # the synthetic --tmp_dir each problem of T2T's datagen ran on
    "translate_ende_wmt8k_packed": REFERENCE / "translate_ende" / "tmp",
    "translate_ende_wmt_multi64k_packed1k": REFERENCE / "translate_ende" / "tmp",
    "languagemodel_lm1b_characters_packed": REFERENCE / "lm1b" / "tmp",
    "languagemodel_lm1b8k_packed": REFERENCE / "lm1b" / "tmp",
}


@pytest.fixture
def packed_registered():
    """T2T's packed problems registered for the test only (the registry restored after it)."""
    gen = restored_registry({"t2t_usr_dir_packed"})
    next(gen)
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.t2t_compat import packed_problems

    register_builtins()
    for cls in packed_problems.T2T_REGISTERED_PROBLEMS:
        registry.register_problem(cls.problem_name)(cls)
    yield
    next(gen, None)


@pytest.mark.parametrize("case", range(len(T2T["pack_examples"])))
def test_pack_examples_packs_as_t2ts(case):
    """With and without inputs, spacing 0 and 2, chopped sequences (one leaving an empty
    remainder), sequences longer than packed_length, a queue of open packs overflowing."""
    want = T2T["pack_examples"][case]
    packed = list(pack_examples(iter(want["examples"]), **want["args"]))
    assert packed == want["packed"]


def test_chopping_pairs_is_refused_as_t2t_asserts():
    with pytest.raises(ValueError, match="has_inputs=False"):
        list(pack_examples([{"inputs": [1], "targets": [2]}], True, 1, chop_long_sequences=True))


def test_the_packed_problems_are_t2ts(packed_registered):
    """What T2T's classes say: packed_length and spacing, inputs, prefixes, the base problem's
    vocabulary file, splits, num_training_examples, max_length and the reading spec."""
    assert len(T2T["facts"]) == 15
    for name, want in T2T["facts"].items():
        problem = registry.problem(name)
        try:
            examples = problem.num_training_examples
        except NotImplementedError:
            examples = "NotImplementedError"
        found = {
            "packed_length": problem.packed_length,
            "packed_spacing": problem.packed_spacing,
            "has_inputs": problem.has_inputs,
            "inputs_prefix": problem.inputs_prefix,
            "targets_prefix": problem.targets_prefix,
            "vocab_type": problem.vocab_type,
            "vocab_filename": problem.vocab_filename if problem.vocab_type != "character" else None,
            "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
            "num_training_examples": examples,
            "max_length": problem.max_length(HParams(max_length=77, batch_size=99)),
            "reading_spec": sorted(problem.example_reading_spec()[0]),
        }
        assert found == want, name


def _datagen(argv: list[str]) -> None:
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0


def _check(name: str, data_dir: Path) -> None:
    """The files, the vocabulary, every shard's records (all features' ids) and the problem
    hparams' modalities and vocab sizes, as T2T's."""
    want = T2T["datagen"][name]
    ours = sorted(p.name for p in data_dir.iterdir())
    mine = lambda files: [f for f in files if f.startswith(f"{name}-")]  # noqa: E731
    assert mine(ours) == mine(want["files"])
    assert set(want["files"]) - set(mine(want["files"])) <= set(ours)  # the vocabulary
    problem = registry.problem(name)
    if want["vocab_sha256"]:
        vocab = (data_dir / problem.vocab_filename).read_bytes()
        assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard, None) == (count, want["records_sha256"][shard]), shard
    hp = problem.get_hparams(HParams(data_dir=str(data_dir)))
    assert dict(hp.modality) == want["modality"]
    assert dict(hp.vocab_size) == want["vocab_size"]


@pytest.mark.parametrize("name", sorted(TMP))
def test_datagen_of_t2ts_packed_problems_writes_t2ts_records(name, tmp_path, packed_registered):
    """WMT EN-DE with translate_ende_wmt8k's vocabulary (built here from T2T's corpora) and
    with the multilingual one (given in --data_dir) and its prefixes; LM1B's bytes and 8k
    subwords, its long lines chopped (targets only, placeholder inputs [0])."""
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(TMP[name], tmp_dir)
    if "multi64k" in name:
        shutil.copytree(WIKI64K, data_dir)
    _datagen([f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"])
    _check(name, data_dir)
    ours = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert ours == T2T["datagen"][name]["files"]


def test_a_usr_dir_problem_with_packed_length_writes_t2ts_records(tmp_path):
    """A Text2TextProblem packed to 24 ids with spacing 2 (one pair longer than that) and a
    character Text2SelfProblem packed to 32 ids (longer lines chopped): T2T's records, in
    T2T's order; a rerun missing a shard writes T2T's records again."""
    gen = restored_registry({"t2t_usr_dir_packed"})
    next(gen)
    try:
        data_dir = tmp_path / "data"
        argv = [f"--t2t_usr_dir={USR_DIR}", f"--data_dir={data_dir}", f"--tmp_dir={tmp_path}/t"]
        _datagen(["--problem=packed_pairs,packed_lines", *argv])
        for name in ("packed_pairs", "packed_lines"):
            _check(name, data_dir)
            for shard, examples in T2T["datagen"][name]["shards"].items():
                assert record_ids(data_dir / shard, None) == examples, shard
        (data_dir / "packed_pairs-train-00001-of-00002").unlink()
        _datagen(["--problem=packed_pairs", *argv])
        _check("packed_pairs", data_dir)
    finally:
        next(gen, None)
