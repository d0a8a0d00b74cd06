"""T2T's ``split_targets_chunk_length`` against T2T 1.15.7's own ``input_fn``.

``tools/t2t_reference/make_t2t_target_chunks_reference.py`` ran T2T's ``data_reader.input_fn``
on crafted examples in EVAL mode; here the same examples, written as records, go through
``make_dataset`` with the same hparams: the same batches, chunk for chunk (T2T's extra
``chunk_number`` feature aside, which only its recurrent-memory models read).
"""

import dataclasses
import json

import pytest
import tensorflow as tf

from t2t_repro.data import records, target_chunks
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


def test_a_step_of_several_replicas_is_one_chunk_of_every_row(tmp_path):
    """T2T chunks the worker's whole batch and splits each chunk over its shards: two
    replicas' consecutive batches give chunk 0 of both, then chunk 1 of both; a chunk all PAD
    in its own batch is dropped and the next batch's chunks move up."""
    first = {"inputs": [[3, 1], [4, 1]], "targets": [[5, 6, 7, 8, 1], [2, 1, 0, 0, 0]]}
    second = {"inputs": [[9, 9, 1]], "targets": [[7, 1]]}
    third = {"inputs": [[6, 1]], "targets": [[4, 1]]}
    ds = tf.data.Dataset.from_tensors(first)
    for batch in (second, third):
        ds = ds.concatenate(tf.data.Dataset.from_tensors(batch))
    chunks = target_chunks.split_targets(ds, chunk_length=3, max_chunks=2, replicas=2)
    got = [{k: v.numpy().tolist() for k, v in b.items()} for b in chunks]
    assert [b["targets"] for b in got] == [
        [[5, 6, 7], [2, 1, 0]],  # step 1: chunk 0 of the first two batches
        [[7, 1, 0]],
        [[8, 1, 0], [0, 0, 0]],  # step 2: the first's chunk 1; the second has none left
        [[4, 1, 0]],
    ]
    assert [b["inputs"] for b in got] == [b["inputs"] for b in (first, second, first, third)]
    # The trainer saves its input's position with each checkpoint: no state it cannot save.
    position = iter(chunks)
    next(position)
    tf.train.Checkpoint(input=position).write(str(tmp_path / "input"))


def test_a_padded_buckets_extra_pad_is_not_counted(tmp_path):
    """``padded_bucket_step`` pads both features to one bucket length; T2T's batches end at
    the longest target, so long inputs beside short targets still fit the chunks."""
    examples = [{"inputs": list(range(2, 22)) + [1], "targets": [5, 6, 7, 8, 1]}]
    hparams = _hparams(padded_bucket_step=1.2, max_length=32)
    targets = [b["targets"] for b in _batches(tmp_path, examples, hparams)]
    assert targets == [[[5, 6, 7]], [[8, 1, 0]]]


def test_split_decodes_and_early_checks_refuse_in_one_line():
    """T2T decodes a split chunk by chunk (its input_fn chunks in every mode): refused, as
    strided training, before --generate_data would write."""
    from t2t_repro.decoding.split_decoding import check_split_decodable
    from t2t_repro.errors import UserError
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.run_setup import check_config

    with pytest.raises(UserError, match="--decode_from_file") as e:
        check_split_decodable(_hparams())
    assert "\n" not in str(e.value)
    chunked = "split_targets_chunk_length=4"
    for schedule, more, why in (
        ("train_eval_and_decode", "", "chunk by chunk"),
        ("train", ",split_targets_strided_training=true", "TPU only"),
    ):
        config = TrainerConfig("translate_toy", "transformer_tiny", "d", "o", schedule=schedule)
        with pytest.raises(UserError, match=why):
            check_config(dataclasses.replace(config, hparams=chunked + more))
    check_config(TrainerConfig("translate_toy", "transformer_tiny", "d", "o", hparams=chunked))
