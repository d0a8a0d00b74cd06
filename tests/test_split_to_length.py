"""T2T's ``split_to_length`` hparam: each example's inputs and targets cut into examples of
that many ids after the truncations (``data_generators/problem.py``,
``preprocess_example_common``), as T2T 1.15.7's own function cuts them
(``tests/data/t2t_reference/t2t_1.15.7_split_to_length.json``, made by
``tools/t2t_reference/make_t2t_split_reference.py``)."""

import json

import pytest
import tensorflow as tf

from t2t_repro.data import records
from t2t_repro.data.input_pipeline import EVAL, make_dataset, split_to_length
from t2t_repro.hparam import HParams
from tests.t2t_fixtures import REFERENCE

T2T = json.loads((REFERENCE / "t2t_1.15.7_split_to_length.json").read_text(encoding="utf-8"))


def hparams(**values) -> HParams:
    base = dict(batch_size=64, max_length=0, min_length_bucket=8, length_bucket_step=1.1)
    return HParams(**{**base, "batch_shuffle_size": 0, "min_length": 0, **values})


def pipeline_examples(tmp_path, case: dict) -> list[dict]:
    """The case through the whole input pipeline (its parsing, truncations and split), one
    example a batch row, PAD-free (a language model's records hold empty inputs here)."""
    example = {"inputs": [], **{k: v for k, v in case["case"].items() if k != "extra"}}
    path = tmp_path / records.shard_name("p", "dev", 0, 1)
    records.write_records_atomically(str(path), [records.serialize_example(example)])
    hp = hparams(
        split_to_length=case["split_to_length"],
        max_input_seq_length=case["max_input_seq_length"],
        max_target_seq_length=case["max_target_seq_length"],
    )
    rows = []
    for batch in make_dataset(str(tmp_path / "p-dev-*"), EVAL, hp):
        for i in range(batch["targets"].shape[0]):
            rows.append({k: [int(x) for x in v[i] if x] for k, v in batch.items()})
    return sorted(rows, key=lambda row: row["targets"])


@pytest.mark.parametrize("name", sorted(n for n in T2T if "error" not in T2T[n]))
def test_the_pipeline_cuts_examples_as_t2t(name, tmp_path):
    want = [{"inputs": [], **row} for row in T2T[name]["examples"]]
    assert pipeline_examples(tmp_path, T2T[name]) == sorted(want, key=lambda r: r["targets"])


@pytest.mark.parametrize("name", sorted(n for n in T2T if "error" in T2T[n]))
def test_what_t2ts_reshape_refuses_stops_with_one_line(name, tmp_path):
    """T2T fails there (its reshape); the pipeline says why, at the example."""
    assert T2T[name]["error"] == "ValueError"  # (T2T's constants: a static-shape error)
    with pytest.raises(tf.errors.InvalidArgumentError, match="split_to_length=3") as e:
        pipeline_examples(tmp_path, T2T[name])
    assert "T2T fails there too, in its reshape" in str(e.value)


def test_a_language_models_empty_inputs_stay_empty_a_chunk():
    chunks = list(
        split_to_length({"inputs": tf.zeros([0], tf.int32), "targets": tf.range(1, 7)}, 2)
    )
    assert [c["targets"].numpy().tolist() for c in chunks] == [[1, 2], [3, 4], [5, 6]]
    assert all(c["inputs"].shape == (0,) for c in chunks)
