"""``t2t_repro/data/custom_op_packing.py`` against T2T 1.15.7's own ``pack_dataset(...,
use_custom_ops=True)``, run with its ``pack_sequences2`` op compiled from the 1.15.7 source
(``tools/t2t_reference/make_t2t_custom_pack_reference.py``): the same packed examples, in the
same order, with the same dtypes, and the same refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.data.custom_op_packing import pack_with_custom_op_meaning

REF = Path(__file__).parent / "data" / "t2t_custom_pack_reference"
CASES = sorted(p.stem for p in REF.glob("*.json") if p.stem != "errors")


def _dataset(examples: list[dict], dtype=tf.int64) -> tf.data.Dataset:
    """The examples as T2T's reader gives them: 1-D id tensors (int64 scalars stay scalars)."""
    first = examples[0] if examples else {"inputs": [], "targets": []}
    columns = {}
    for k, v in first.items():
        if isinstance(v, list):
            flat = np.array([i for ex in examples for i in ex[k]], dtype=dtype.as_numpy_dtype)
            lengths = [len(ex[k]) for ex in examples]
            columns[k] = tf.RaggedTensor.from_row_lengths(flat, np.array(lengths, np.int64))
        else:
            columns[k] = np.array([ex[k] for ex in examples], np.int64)
    return tf.data.Dataset.from_tensor_slices(columns)


def _packed(examples: list[dict], length: int, keys: list[str]) -> tuple[dict, dict]:
    """Our packed examples as arrays of rows (read in blocks: the large case has 1003 rows)."""
    packed = pack_with_custom_op_meaning(_dataset(examples), length, keys)
    dtypes = {k: spec.dtype.name for k, spec in sorted(packed.element_spec.items())}
    blocks = list(packed.batch(512).as_numpy_iterator())
    arrays = {
        k: np.concatenate([b[k] for b in blocks]) if blocks else np.zeros((0, length), dtype)
        for k, dtype in dtypes.items()
    }
    assert {k: v.dtype.name for k, v in arrays.items()} == dtypes
    return arrays, dtypes


@pytest.mark.parametrize("name", CASES)
def test_same_packed_examples_as_t2t(name: str) -> None:
    ref = json.loads((REF / f"{name}.json").read_text(encoding="utf-8"))
    if "examples_runs" in ref:
        examples = [
            {k: [i for i, count in runs for _ in range(count)] for k, runs in ex.items()}
            for ex in ref["examples_runs"]
        ]
    else:
        examples = ref["examples"]
    packed, dtypes = _packed(examples, ref["length"], ref["keys"])
    assert dtypes == ref["packed_dtypes"]
    assert all(len(v) == ref["num_packed"] for v in packed.values())
    if "packed_sha256" in ref:  # the script's digest(): each key's array, keys sorted
        h = hashlib.sha256()
        for k in sorted(packed):
            h.update(packed[k].astype(packed[k].dtype.newbyteorder("<")).tobytes())
        assert h.hexdigest() == ref["packed_sha256"]
        for i, row in ref["packed_rows"].items():
            assert {k: v[int(i)].tolist() for k, v in packed.items()} == row
    else:
        assert {k: v.tolist() for k, v in packed.items()} == ref["packed"]


def test_same_refusals_as_t2t() -> None:
    errors = json.loads((REF / "errors.json").read_text(encoding="utf-8"))
    base = json.loads((REF / "docstring_l10.json").read_text(encoding="utf-8"))
    attempts = {
        "one_key": (tf.int64, ["targets"]),
        "three_keys": (tf.int64, ["inputs", "targets", "inputs"]),
        "missing_key": (tf.int64, ["inputs", "weights"]),
        "float_tokens": (tf.float32, ["inputs", "targets"]),  # the op's TypeError, as int32's
    }
    assert sorted(errors) == sorted(attempts.keys() - {"float_tokens"} | {"int32_tokens"})
    errors["float_tokens"] = errors["int32_tokens"]
    for name, (dtype, keys) in attempts.items():
        with pytest.raises(Exception) as raised:
            pack_with_custom_op_meaning(_dataset(base["examples"], dtype), 10, keys)
        assert type(raised.value).__name__ == errors[name], name


def test_int32_ids_pack_to_t2ts_values_and_stay_int32() -> None:
    """T2T's op refuses int32 ids (errors.json); T2T packs int64 ids and casts them to int32
    after (``cast_ints_to_int32``): int32 ids here give those values, as int32."""
    ref = json.loads((REF / "quirks_l10.json").read_text(encoding="utf-8"))
    packed = pack_with_custom_op_meaning(_dataset(ref["examples"], tf.int32), 10, ref["keys"])
    rows = list(packed.as_numpy_iterator())
    for k, want in ref["packed"].items():
        assert [r[k].tolist() for r in rows] == want, k
        dtype = "int32" if k in ref["keys"] else ref["packed_dtypes"][k]
        assert {r[k].dtype.name for r in rows} == {dtype}, k
