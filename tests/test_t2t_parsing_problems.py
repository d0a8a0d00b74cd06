"""T2T 1.15.7's parsing problems ``parsing_english_ptb8k``, ``parsing_english_ptb16k``
(``problem_hparams.py``; t2t_compat/ptb_parsing.py) and ``parsing_icelandic16k``
(``ice_parsing.py``; t2t_compat/ice_parsing.py) under T2T's names: the Icelandic datagen writes
what T2T's writes (vocabularies byte for byte, each shard's record ids); each problem's feature
encoders and problem hparams are T2T's on T2T's files (tests/data/t2t_parsing_problems_reference,
made by T2T itself: tools/t2t_reference/make_t2t_parsing_problems_reference.py), and the
trainer's hparams come from them; the PTB problems' datagen, which T2T lacks, is one line."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import t2t_repro.t2t_compat.ice_parsing  # noqa: F401  (registers the problems)
import t2t_repro.t2t_compat.ptb_parsing  # noqa: F401
from t2t_repro.commands import datagen
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.hparam import HParams
from tests.t2t_records import ids_digest

REFERENCE = Path(__file__).parent / "data" / "t2t_parsing_problems_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_parsing.json").read_text(encoding="utf-8"))
PROBLEMS = EXPECTED["problems"]
PTB = ["parsing_english_ptb8k", "parsing_english_ptb16k"]
ICE = "parsing_icelandic16k"
FLAGS = ["--offline", "--noprogress", "--num_workers=1"]
_FACTS = set(PROBLEMS[PTB[0]]) - {"datagen_raises"}  # what _facts() gives


@pytest.fixture(scope="module")
def ice_data_dir(tmp_path_factory) -> Path:
    """T2T's datagen of parsing_icelandic16k on the stored pairs, through t2t-datagen."""
    root = tmp_path_factory.mktemp("ice")
    shutil.copytree(REFERENCE / "ice_tmp", root / "tmp")
    argv = [f"--problem={ICE}", f"--data_dir={root / 'data'}", f"--tmp_dir={root / 'tmp'}"]
    assert datagen.main([*argv, *FLAGS]) == 0
    return root / "data"


@pytest.fixture
def ptb_data_dir(tmp_path) -> Path:
    """A data dir holding T2T's PTB vocabularies (as a T2T user's would)."""
    shutil.copytree(REFERENCE / "ptb_data", tmp_path / "data")
    return tmp_path / "data"


def test_icelandic_datagen_writes_what_t2t_1_15_7_writes(ice_data_dir):
    want = PROBLEMS[ICE]
    assert sorted(p.name for p in ice_data_dir.iterdir()) == want["files"]
    for name, digest in want["vocab_sha256"].items():
        assert hashlib.sha256((ice_data_dir / name).read_bytes()).hexdigest() == digest, name
    for shard, count in want["records"].items():
        assert ids_digest(ice_data_dir / shard) == (count, want["records_sha256"][shard]), shard


def _facts(problem, data_dir: Path) -> dict:
    """What the reference script records of T2T's problem, asked the same way."""
    hp = problem.get_hparams(HParams(data_dir=str(data_dir)))
    encoders = problem.feature_encoders(str(data_dir))
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "batch_size_multiplier": hp.batch_size_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "encoder_vocab_sizes": {k: e.vocab_size for k, e in sorted(encoders.items())},
        "encodings": {
            k: [e.encode(s) for s in EXPECTED["sentences"]] for k, e in sorted(encoders.items())
        },
    }


@pytest.mark.parametrize("name", [*PTB, ICE])
def test_encoders_and_problem_hparams_are_t2ts(name, ice_data_dir, ptb_data_dir):
    data_dir = ice_data_dir if name == ICE else ptb_data_dir
    want = {k: v for k, v in PROBLEMS[name].items() if k in _FACTS}
    assert _facts(t2t_registry.problem(name), data_dir) == want


@pytest.mark.parametrize("name", [*PTB, ICE])
def test_the_trainer_reads_t2ts_problem_hparams(name, ice_data_dir, ptb_data_dir):
    """t2t-trainer's path (``problem_hparams(data_dir, model_hparams)``): separate input and
    target vocab sizes, the loss and batch multipliers and the target space, as T2T's."""
    from t2t_repro.hparams_lib.build import create_run_hparams

    data_dir = str(ice_data_dir if name == ICE else ptb_data_dir)
    want = PROBLEMS[name]
    problem = t2t_registry.problem(name)
    hp = create_run_hparams(problem, data_dir, "transformer_tiny")
    sizes = (hp.input_vocab_size, hp.target_vocab_size)
    assert sizes == (want["vocab_size"]["inputs"], want["vocab_size"]["targets"])
    assert hp.target_space_id == want["target_space_id"]
    assert (hp.get("loss_multiplier") or 1.0) == want["loss_multiplier"]
    assert problem.batch_size_multiplier == want["batch_size_multiplier"]
    encoders = problem.get_encoders(data_dir)  # the decoder's: each side its own
    assert encoders["inputs"].vocab_size == want["encoder_vocab_sizes"]["inputs"]
    assert encoders["targets"].vocab_size == want["encoder_vocab_sizes"]["targets"]


@pytest.mark.parametrize("name", PTB)
def test_ptb_datagen_is_one_line_naming_what_to_place(name, tmp_path, capsys):
    assert PROBLEMS[name]["datagen_raises"] == "NotImplementedError"  # T2T's
    argv = [f"--problem={name}", f"--data_dir={tmp_path / 'data'}", f"--tmp_dir={tmp_path}"]
    assert datagen.main([*argv, *FLAGS]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no datagen" in err and f"{name}-train-*" in err
    for vocab in ("vocab.endefr.8192",) if name.endswith("8k") else ("wsj_source.vocab.512",):
        assert vocab in err
    with pytest.raises(NotImplementedError):  # T2T's exception, as T2T's users catch it
        t2t_registry.problem(name).generate_data(str(tmp_path), str(tmp_path), progress=False)
    with pytest.raises(DataError, match="not found.*place T2T's vocabularies") as e:
        t2t_registry.problem(name).problem_hparams(str(tmp_path))
    assert "\n" not in str(e.value)


def test_icelandic_missing_pairs_are_one_line(tmp_path):
    problem = t2t_registry.problem(ICE)
    with pytest.raises(DataError, match="parsing_train.pairs not found.*--tmp_dir") as e:
        problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    assert "\n" not in str(e.value)
    with pytest.raises(DataError, match="ice_source.tokens.vocab.16384 not found"):
        problem.problem_hparams(str(tmp_path))


def test_t2t_module_names_give_these_classes():
    """``tensor2tensor.data_generators.ice_parsing`` is the module here, and
    ``problem_hparams``'s parsing classes are these (t2t_modules.IMPLEMENTED)."""
    from t2t_repro.t2t_compat import aliases, ice_parsing, ptb_parsing, t2t_modules

    assert aliases.ALIASES["tensor2tensor.data_generators.ice_parsing"] == ice_parsing.__name__
    implemented = t2t_modules.IMPLEMENTED["tensor2tensor.data_generators.problem_hparams"]
    for cls in ptb_parsing.T2T_REGISTERED_PROBLEMS:
        assert implemented[cls.__name__] == ptb_parsing.__name__
