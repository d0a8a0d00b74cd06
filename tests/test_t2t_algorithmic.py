"""T2T 1.15.7's algorithmic and cipher problems under T2T's names (t2t_compat/algorithmic.py,
cipher.py): the cases, problem hparams and metrics of each, and the shards its datagen writes,
equal to what T2T 1.15.7 itself gives (tests/data/t2t_1.15.7_algorithmic.json, made by T2T:
tools/t2t_reference/make_t2t_algorithmic_reference.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from tests.t2t_records import ids_digest

EXPECTED = json.loads(
    (Path(__file__).parent / "data" / "t2t_1.15.7_algorithmic.json").read_text(encoding="utf-8")
)
SEED = EXPECTED["random_seed"]


@pytest.mark.parametrize("name", sorted(EXPECTED["problems"]))
def test_cases_hparams_and_metrics_are_t2ts(name):
    want = EXPECTED["problems"][name]
    problem = registry.problem(name)
    np.random.seed(SEED)
    first = len(want["first_train_cases"])
    cases = problem.generator(problem.num_symbols, problem.train_length, first)
    assert [{k: [int(i) for i in v] for k, v in c.items()} for c in cases] == want[
        "first_train_cases"
    ]
    hparams = problem.get_hparams()
    assert dict(hparams.vocab_size) == want["vocab_size"]
    assert (hparams.input_space_id, hparams.target_space_id) == (
        want["input_space_id"],
        want["target_space_id"],
    )
    assert list(problem.eval_metrics()) == want["eval_metrics"]
    assert [problem.train_length, problem.dev_length, problem.num_shards] == want["sizes"]


def _records(data_dir: Path) -> dict:
    paths = sorted(data_dir.iterdir())
    return {p.name: ids_digest(p) for p in paths if not p.name.endswith(".datagen.json")}


def _expected(key: str) -> dict:
    want = EXPECTED["datagen"][key]
    return {f: (n, want["records_sha256"][f]) for f, n in want["records"].items()}


@pytest.mark.parametrize("name", ["algorithmic_reverse_binary40_test", "tiny_algo"])
def test_datagen_writes_t2ts_records(name, tmp_path):
    argv = [f"--problem={name}", f"--data_dir={tmp_path}", "--noprogress"]
    assert datagen.main(argv) == 0
    assert _records(tmp_path) == _expected(name)


@pytest.mark.parametrize("key", [k for k in EXPECTED["datagen"] if k.count(":") == 2])
def test_ten_shards_round_robin_as_t2ts(key, tmp_path):
    """T2T's 10 train shards, written in turn, unshuffled (fewer cases than T2T's 110,000)."""
    name, train, dev = key.split(":")
    base = type(registry.problem(name))
    small = type("Small", (base,), {"train_size": int(train), "dev_size": int(dev)})
    small.name = name
    small().generate_data(str(tmp_path), None, None)  # as t2t-datagen calls it: seeded
    assert _records(tmp_path) == _expected(key)
