"""On-the-fly packing (hparam ``pack_dataset``) gives what tensor2tensor 1.15.7's
``generator_utils.pack_dataset(..., use_custom_ops=False)`` gives: the same packed examples in
T2T's (deterministic) order, with T2T's dtypes, shapes, extra keys and quirks.

Expected values: ``tests/data/t2t_pack_dataset_reference/``, written by T2T's own code
(``tools/t2t_reference/make_t2t_pack_dataset_reference.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.data import custom_op_packing
from t2t_repro.data.dataset_packing import pack_dataset, window_size

REFERENCE = Path(__file__).parent / "data" / "t2t_pack_dataset_reference"
CASES = sorted(p.stem for p in REFERENCE.glob("*.json") if p.stem != "errors")


def _load(name: str) -> dict:
    with open(REFERENCE / f"{name}.json", encoding="utf-8") as f:
        return json.load(f)


def _dataset(examples: list[dict], dtype: str) -> tf.data.Dataset:
    """The case's examples as T2T read them: 1-D ``dtype`` sequences, int64 scalars."""
    columns = {}
    for key, first in examples[0].items():
        values = [ex[key] for ex in examples]
        if isinstance(first, list):
            columns[key] = tf.ragged.constant(values, dtype=getattr(tf, dtype), ragged_rank=1)
        else:
            columns[key] = tf.constant(values, tf.int64)
    return tf.data.Dataset.from_tensor_slices(columns)


def _packed(case: dict, **kwargs) -> tf.data.Dataset:
    return pack_dataset(
        _dataset(case["examples"], case["dtype"]), case["length"], case["keys"], **kwargs
    )


def _rows(ds: tf.data.Dataset) -> list[dict]:
    return [{k: v.tolist() for k, v in row.items()} for row in ds.as_numpy_iterator()]


def test_the_reference_covers_what_it_claims():
    """T2T's cases: lengths, windows, drops, empties and key layouts (else the test is weak)."""
    assert len(CASES) >= 10
    lengths, windows, dropped, empty, layouts = set(), 0, 0, 0, set()
    for name in CASES:
        case = _load(name)
        assert case["versions"]["tensor2tensor"] == "1.15.7"
        lengths.add(case["length"])
        windows = max(windows, -(-len(case["examples"]) // case["window_size"]))
        seqs = [v for ex in case["examples"] for v in ex.values() if isinstance(v, list)]
        dropped += sum(len(s) > case["length"] for s in seqs)
        empty += sum(not s for s in seqs)
        layouts.add((tuple(case["keys"] or ["None"]), tuple(sorted(case["examples"][0]))))
        assert len(case["packed"][sorted(case["packed"])[0]]) >= 1
    assert len(lengths) >= 5 and 1 in lengths
    assert windows > 10  # more windows than T2T's interleave cycle
    assert dropped > 10 and empty > 10
    assert (("targets",), ("targets",)) in layouts
    assert (("None",), ("extra", "inputs", "targets")) in layouts
    assert (("inputs", "targets"), ("example_id", "inputs", "targets", "weights")) in layouts


@pytest.mark.parametrize("name", CASES)
def test_packed_examples_equal_t2t(name):
    """Exact ids, order, keys, dtypes and static shapes of T2T's packed examples."""
    case = _load(name)
    assert window_size(case["length"]) == case["window_size"]
    packed = _packed(case)
    spec = packed.element_spec
    assert {k: s.shape.as_list() for k, s in spec.items()} == case["packed_shapes"]
    assert {k: s.dtype.name for k, s in spec.items()} == case["packed_dtypes"]
    got = list(packed.as_numpy_iterator())
    expected = case["packed"]
    assert len(got) == len(expected["targets"])
    for key, rows in expected.items():
        ours = np.stack([ex[key] for ex in got])
        assert ours.dtype.name == case["packed_dtypes"][key], key
        np.testing.assert_array_equal(ours, np.array(rows), err_msg=f"{name}: {key}")


def test_t2t_quirks_are_kept():
    """The quirks, on our output, with the values T2T 1.15.7 gave (quirks_l10.json)."""
    ours = list(_packed(_load("quirks_l10")).as_numpy_iterator())
    # Longer than length: dropped, not truncated (T2T's docstring says truncated).
    assert len(ours) == 3 and not any(ex["inputs"][0] == 5 for ex in ours)
    first = {k: v.tolist() for k, v in ours[0].items()}
    # {"inputs": [], "targets": [9, 9]} after an empty example: targets' segment id skips 3
    # and its positions do not restart.
    assert first["targets"][5:8] == [9, 9, 4]
    assert first["targets_segmentation"][5:8] == [4, 4, 5]
    assert first["targets_position"][5:8] == [3, 4, 3]
    # A token 0 inside a sequence has segment and position 0.
    second = {k: v.tolist() for k, v in ours[1].items()}
    assert second["inputs"][:3] == [7, 0, 7]
    assert second["inputs_segmentation"][:3] == [1, 0, 1]
    assert second["inputs_position"][:3] == [0, 0, 2]


def test_calls_t2t_refuses_are_refused():
    """Each call T2T 1.15.7 refuses (errors.json: its exception) is refused here too."""
    with open(REFERENCE / "errors.json", encoding="utf-8") as f:
        t2t = json.load(f)
    case = _load("docstring_l10")
    examples = case["examples"]
    # T2T's wheel lacks pack_sequences_ops; here use_custom_ops packs as that op does (its
    # meaning, checked against the compiled op in test_custom_op_packing.py).
    assert t2t["use_custom_ops"] == "ModuleNotFoundError"
    other = _load("quirks_l10")  # a case the two packings pack differently
    by_op = custom_op_packing.pack_with_custom_op_meaning(
        _dataset(other["examples"], other["dtype"]), other["length"], other["keys"]
    )
    assert _rows(_packed(other, use_custom_ops=True)) == _rows(by_op) != _rows(_packed(other))
    assert t2t["missing_key"] == "ValueError"
    with pytest.raises(ValueError, match="weights"):
        pack_dataset(_dataset(examples, "int64"), 10, ["inputs", "weights"])
    assert t2t["mixed_dtypes"] == "ValueError"
    mixed = _dataset(examples, "int64").map(
        lambda ex: {"inputs": ex["inputs"], "targets": tf.cast(ex["targets"], tf.int32)}
    )
    with pytest.raises(ValueError, match="dtypes"):
        pack_dataset(mixed, 10, ["inputs", "targets"])
    assert t2t["two_dimensional"] == "ValueError"
    matrix = _dataset(examples, "int64").map(
        lambda ex: {"inputs": ex["inputs"], "targets": ex["targets"][tf.newaxis]}
    )
    with pytest.raises(ValueError, match="one-dimensional"):
        pack_dataset(matrix, 10, ["inputs", "targets"])
    assert t2t["length_0"] == "InvalidArgumentError"  # T2T's window(0)
    with pytest.raises(ValueError, match="length"):
        _packed(dict(case, length=0))
    assert t2t["minus_one_token"] == "InvalidArgumentError"  # T2T's leak check of its sentinel
    sentinel = dict(case, examples=[{"inputs": [3, -1], "targets": [2]}])
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(_packed(sentinel).as_numpy_iterator())
