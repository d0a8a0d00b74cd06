"""Packed batches through the input pipeline and the trainer: a packed problem's records keep
their segmentations and positions to the model, T2T's ``pack_dataset`` hparam packs on the fly
(as ``data/dataset_packing.py`` and ``data/custom_op_packing.py`` pack, each checked against
T2T in its own test), and what cannot run with packed data stops in one line."""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.data import custom_op_packing, dataset_packing, records
from t2t_repro.data.input_pipeline import (
    EVAL,
    FEATURES,
    PACKED_FEATURES,
    TRAIN,
    make_dataset,
    parse_and_truncate,
)
from t2t_repro.data.text_files import DataError
from t2t_repro.hparam import HParams, HParamsError
from tests.grappler import grappler_off_env
from tests.tools import SMALL_BATCH_SHUFFLE, run_tool

PACKED_TMP = Path(__file__).parent / "data" / "t2t_packed_reference" / "translate_ende" / "tmp"
# Two packed rows as T2T's pack_examples writes them (spacing 0 here).
PACKED_ROWS = [
    {
        "inputs": [5, 6, 1, 7, 1],
        "inputs_segmentation": [1, 1, 1, 2, 2],
        "inputs_position": [0, 1, 2, 0, 1],
        "targets": [8, 1, 9, 9, 1],
        "targets_segmentation": [1, 1, 2, 2, 2],
        "targets_position": [0, 1, 0, 1, 2],
    },
    {
        "inputs": [4, 1],
        "inputs_segmentation": [1, 1],
        "inputs_position": [0, 1],
        "targets": [3, 3, 3, 1],
        "targets_segmentation": [1, 1, 1, 1],
        "targets_position": [0, 1, 2, 3],
    },
]


def hparams(**overrides) -> HParams:
    values = dict(
        batch_size=64,
        max_length=12,
        min_length_bucket=8,
        length_bucket_step=1.1,
        batch_shuffle_size=0,
        min_length=0,
    )
    values.update(overrides)
    return HParams(**values)


def write_shard(tmp_path, examples, name="p") -> str:
    path = tmp_path / records.shard_name(name, "dev", 0, 1)
    records.write_records_atomically(str(path), map(records.serialize_example, examples))
    return str(tmp_path / f"{name}-dev-*")


def rows(ds) -> list[dict]:
    """Each batch's rows, PAD-stripped per feature (padding is 0 in every feature)."""
    out = []
    for batch in ds:
        batch = {k: v.numpy() for k, v in batch.items()}
        for i in range(len(batch["targets"])):
            out.append({k: v[i] for k, v in batch.items()})
    return out


def test_a_packed_problems_records_reach_the_model_with_their_segments(tmp_path):
    pattern = write_shard(tmp_path, PACKED_ROWS)
    read = parse_and_truncate(hparams(), packed=True)
    batches = list(make_dataset(pattern, EVAL, hparams(), read_example=read))
    assert set(batches[0]) == set(FEATURES + PACKED_FEATURES)
    got = sorted(rows(batches), key=lambda r: len(np.trim_zeros(r["inputs"])))
    for row, want in zip(got, sorted(PACKED_ROWS, key=lambda r: len(r["inputs"])), strict=True):
        for name, values in want.items():
            padded = row[name]
            assert padded.tolist() == values + [0] * (len(padded) - len(values)), name
    # One padded length per side: a segmentation is as long as its ids.
    for batch in batches:
        assert batch["inputs_segmentation"].shape == batch["inputs"].shape
        assert batch["targets_position"].shape == batch["targets"].shape


def test_packed_records_refuse_a_truncation_that_would_cut_them_in_one_line(tmp_path):
    """Below the rows' length (the problem's max_length, its packed_length) T2T cuts the ids
    apart from their segmentation; at or above it nothing is cut, there as here."""
    pattern = write_shard(tmp_path, PACKED_ROWS)
    hp = hparams(max_input_seq_length=3)
    read = parse_and_truncate(hp, packed=True)
    with pytest.raises(DataError, match="max_input_seq_length would cut packed rows .up to 5"):
        make_dataset(pattern, EVAL, hp, read_example=read, max_length=5)
    hp = hparams(max_input_seq_length=5, max_target_seq_length=8)
    read = parse_and_truncate(hp, packed=True)
    assert len(rows(make_dataset(pattern, EVAL, hp, read_example=read, max_length=5))) == 2


UNPACKED = [
    {"inputs": [i + 2] * (i % 5 + 1) + [1], "targets": [3] * (i % 3) + [1]} for i in range(20)
]


@pytest.mark.parametrize("custom_ops", [False, True])
def test_pack_dataset_packs_the_examples_as_t2ts_packing_does(tmp_path, custom_ops):
    """Evaluation (no shuffle): the pipeline's rows are the packer's rows of the records in
    order, whichever packer ``use_custom_ops`` names; nothing else is dropped or added."""
    pattern = write_shard(tmp_path, UNPACKED)
    hp = hparams(pack_dataset=True, use_custom_ops=custom_ops)
    got = rows(make_dataset(pattern, EVAL, hp))
    source = tf.data.Dataset.from_generator(
        lambda: ({k: np.array(v, np.int32) for k, v in e.items()} for e in UNPACKED),
        output_signature={k: tf.TensorSpec([None], tf.int32) for k in FEATURES},
    )
    if custom_ops:
        packed = custom_op_packing.pack_with_custom_op_meaning(source, 12, keys=list(FEATURES))
    else:
        packed = dataset_packing.pack_dataset(source, 12, keys=list(FEATURES))
    want = [{k: v.numpy() for k, v in ex.items()} for ex in packed]
    assert len(got) == len(want) and len(want) < len(UNPACKED)

    def key(row):
        return tuple(np.trim_zeros(row["inputs"], "b").tolist())

    for row, expected in zip(sorted(got, key=key), sorted(want, key=key), strict=True):
        assert set(row) == set(expected)
        for name, values in expected.items():
            trimmed = row[name][: len(values)]
            assert trimmed.tolist() == values.tolist(), name
            assert not row[name][len(values) :].any(), name


def test_pack_dataset_packs_a_packed_problems_rows_again_as_t2t_does(tmp_path):
    """T2T's pack_dataset packs the inputs and targets and keeps no other key: a packed
    problem's rows are packed again, whole rows as examples, their old segmentation dropped."""
    pattern = write_shard(tmp_path, PACKED_ROWS)
    hp = hparams(pack_dataset=True, use_custom_ops=False)
    got = rows(make_dataset(pattern, EVAL, hp, read_example=parse_and_truncate(hp, True)))
    assert len(got) == 1  # both rows fit in one of max_length 12
    row = got[0]
    assert np.trim_zeros(row["inputs"], "b").tolist() == [5, 6, 1, 7, 1, 4, 1]
    assert row["inputs_segmentation"][:7].tolist() == [1] * 5 + [2] * 2


def test_pack_dataset_packs_training_batches_after_the_shuffle(tmp_path):
    """Training: shuffled, packed, then repeated (T2T's Problem.dataset packs before
    input_fn repeats): every row is packed, within max_length, and the ids of a pass over the
    records are the records' ids."""
    pattern = write_shard(tmp_path, UNPACKED)
    hp = hparams(pack_dataset=True, use_custom_ops=False, batch_size=48)
    seen: list[int] = []
    for batch in make_dataset(pattern, TRAIN, hp, seed=3).take(12):
        assert set(batch) == set(FEATURES + PACKED_FEATURES)
        assert batch["inputs"].shape[1] <= 12
        segments = batch["inputs_segmentation"].numpy()
        assert (segments.max(axis=1) >= 1).all() and (segments.max() > 1)
        seen += [int(i) for i in batch["inputs"].numpy().ravel() if i > 1]
    ids = {i for e in UNPACKED for i in e["inputs"] if i > 1}
    assert set(seen) == ids


@pytest.mark.parametrize(
    "overrides, records_packed, message",
    [
        (dict(pack_dataset=True, max_length=0), False, "set max_length"),
        (dict(pack_dataset=True, max_length=0), True, "set max_length"),
    ],
)
def test_pack_dataset_refuses_what_it_cannot_pack_in_one_line(
    tmp_path, overrides, records_packed, message
):
    pattern = write_shard(tmp_path, PACKED_ROWS if records_packed else UNPACKED)
    hp = hparams(**overrides)
    read = parse_and_truncate(hp, packed=records_packed)
    with pytest.raises(HParamsError, match=message):
        make_dataset(pattern, TRAIN, hp, read_example=read)


@pytest.fixture(scope="module")
def packed_problem_data(tmp_path_factory) -> str:
    """translate_ende_wmt8k_packed's records from T2T's synthetic archives (datagen: 1 s)."""
    from t2t_repro.commands import datagen

    root = tmp_path_factory.mktemp("packed_problem")
    shutil.copytree(PACKED_TMP, root / "tmp")
    argv = [f"--tmp_dir={root / 'tmp'}", f"--data_dir={root / 'data'}", "--offline"]
    argv += ["--problem=translate_ende_wmt8k_packed", "--noprogress", "--num_workers=1"]
    assert datagen.main(argv) == 0
    return str(root / "data")


def test_the_trainer_trains_and_evaluates_on_a_packed_problem(packed_problem_data, tmp_path):
    """A few steps and an evaluation on a packed problem's records (which have no dev
    decodes: one line says why). The trainer reads ``pack_dataset`` through ``make_dataset``,
    above; one run of the model on packed batches serves both."""
    # One layer each (transformer_tiny has two): every mask a packed row meets is in it (the
    # encoder's and the decoder's self-attention, the encoder-decoder attention).
    hparams = "hidden_size=16,filter_size=32,num_heads=2,num_hidden_layers=1,batch_size=256,"
    hparams += SMALL_BATCH_SHUFFLE
    flags = ["--problem=translate_ende_wmt8k_packed", f"--data_dir={packed_problem_data}"]
    out = run_tool(
        "t2t-trainer",
        *flags,
        "--hparams_set=transformer_tiny",
        f"--hparams={hparams}",
        f"--output_dir={tmp_path / 'run'}",
        "--train_steps=2",
        "--eval_steps=1",
        "--local_eval_frequency=2",
        "--schedule=train_and_evaluate",
        "--random_seed=2",
        timeout=600,
        env=grappler_off_env(),  # it checks that the run trains and evaluates: tests/grappler.py
    )
    assert out.returncode == 0, out.stderr[-3000:]
    loss = re.search(r"eval at step 2: loss ([0-9.]+)", out.stdout)
    assert loss and np.isfinite(float(loss.group(1))), out.stdout[-2000:]
    assert "dev records are packed" in out.stdout
