"""T2T's ``split_targets_chunk_length`` against T2T 1.15.7's own ``input_fn``.

``tools/t2t_reference/make_t2t_target_chunks_reference.py`` ran T2T's ``data_reader.input_fn``
on crafted examples in EVAL mode; here the same examples, written as records, go through
``make_dataset`` with the same hparams: the same batches, chunk for chunk (T2T's extra
``chunk_number`` feature aside, which only its recurrent-memory models read).
"""

import json

import pytest
import tensorflow as tf

from t2t_repro.data import records
from t2t_repro.data.input_pipeline import EVAL, TRAIN, make_dataset
from t2t_repro.data.text_files import DataError
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.training.loop.run_errors import raise_data_stop
from tests.t2t_fixtures import REFERENCE

T2T = json.loads((REFERENCE / "t2t_1.15.7_target_chunks.json").read_text())


def _hparams(**overrides) -> HParams:
    values = dict(
        T2T["hparams"],
        max_input_seq_length=0,
        max_target_seq_length=0,
        prepend_mode="none",
        split_to_length=0,
        pack_dataset=False,
        split_targets_strided_training=False,
    )
    return HParams(**{**values, **overrides})


def _batches(tmp_path, examples, hparams, mode=EVAL) -> list[dict]:
    path = str(tmp_path / "dev-00000-of-00001")
    records.write_records_atomically(path, [records.serialize_example(e) for e in examples])
    ds = make_dataset(path, mode, hparams, repeat=False)
    return [{k: v.numpy().tolist() for k, v in sorted(b.items())} for b in ds]


@pytest.mark.parametrize("case, chunk_length", [("eval", 3), ("eval_unchunked", 0)])
def test_batches_are_t2ts(tmp_path, case, chunk_length):
    hparams = _hparams(split_targets_chunk_length=chunk_length)
    assert _batches(tmp_path, T2T["examples"], hparams) == T2T[case]["batches"]


def test_what_t2t_cannot_do_is_one_line(tmp_path):
    """Targets longer than the chunks hold (T2T: a negative padding), strided training (T2T:
    only where the batch size is static, on TPU) and packed examples."""
    assert "Paddings must be non-negative" in T2T["too_long"]["error"]
    with pytest.raises(tf.errors.InvalidArgumentError) as stopped:
        _batches(tmp_path, T2T["too_long"]["examples"], _hparams())
    with pytest.raises(DataError, match="longer than split_targets_chunk_length") as said:
        raise_data_stop(stopped.value, None, str(tmp_path), "dev", None)
    assert "\n" not in str(said.value) and "split_targets_max_chunks" in str(said.value)
    assert "output_shapes" in T2T["strided_training"]["error"]  # TF2 has no such attribute
    for overrides, mode, why in (
        ({"split_targets_strided_training": True}, TRAIN, "TPU only"),
        ({"pack_dataset": True}, EVAL, "packed"),
    ):
        with pytest.raises(HParamsError, match=why):
            _batches(tmp_path, T2T["examples"], _hparams(**overrides), mode)
    # Strided training without chunks changes nothing, as in T2T.
    hparams = _hparams(split_targets_chunk_length=0, split_targets_strided_training=True)
    assert _batches(tmp_path, T2T["examples"], hparams) == T2T["eval_unchunked"]["batches"]
