"""The datagen engine's shards are T2T 1.15.7's: the same examples dealt round-robin and
shuffled in order give the order T2T's own generate_files + shuffle_dataset gave
(tests/data/t2t_reference/t2t_1.15.7_shuffle.json, made by
tools/t2t_reference/make_t2t_shuffle_reference.py), also when a rerun writes only lost shards."""

import json
import os
import random
from pathlib import Path

import pytest
import tensorflow as tf

from t2t_repro.data import records, t2t_shards

REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "t2t_reference" / "t2t_1.15.7_shuffle.json").read_text()
)
SPLITS = ("train", "dev", "test")  # T2T's order of the files (the JSON sorts its keys)


def cases(n):
    """The reference script's examples: example k has inputs [k + 2, EOS]."""
    return [
        (k, records.serialize_example({"inputs": [k + 2, 1], "targets": [k + 1000, 1]}))
        for k in range(n)
    ]


def write(tmp_path, layout, todo=None):
    """Deal (the shards ``todo`` of) every stream, then shuffle all files in order."""
    paths = {
        split: t2t_shards.unshuffled_paths(str(tmp_path), "p", split, n)
        for split, n in REFERENCE["shards"].items()
    }
    everything = [p for split in SPLITS for p in paths[split]]
    todo = set(range(len(everything))) if todo is None else todo
    if layout == "per_split":
        first = 0
        for split in SPLITS:
            n = REFERENCE["shards"][split]
            mine = {i - first for i in todo if first <= i < first + n}
            t2t_shards.write_round_robin(cases(REFERENCE["examples"][split]), paths[split], mine)
            first += n
    else:
        total = sum(REFERENCE["examples"].values())
        t2t_shards.write_round_robin(cases(total), everything, todo)
    counts = t2t_shards.shuffle_in_order(everything, random.Random(REFERENCE["seed"]), todo)
    return {os.path.basename(t2t_shards.final_path(p)): ids(p) for p in everything}, counts


def ids(path):
    """The example ids of a final shard, in file order (read with TensorFlow's reader)."""
    out = []
    for record in tf.compat.v1.io.tf_record_iterator(t2t_shards.final_path(path)):
        feature = tf.train.Example.FromString(record).features.feature
        out.append(feature["inputs"].int64_list.value[0] - 2)
    return out


@pytest.mark.parametrize("layout", ["per_split", "one_stream"])
def test_shards_are_t2ts_and_a_rerun_writes_the_lost_ones_alike(tmp_path, layout):
    expected = REFERENCE["layouts"][layout]
    written, counts = write(tmp_path, layout)
    assert written == expected
    assert counts == [len(ids) for ids in written.values()]  # in the order of the sequence
    assert not list(tmp_path.glob("*unshuffled*"))
    # Lost: train shard 1 and the dev shard (files 1 and 3 of the sequence), whose shuffles
    # follow the draws of the kept train shards.
    for name in ("p-train-00001-of-00003", "p-dev-00000-of-00001"):
        os.remove(tmp_path / name)
    kept = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    again, _ = write(tmp_path, layout, todo={1, 3})
    assert again == expected
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir() if p.name in kept} == kept


def test_datagen_seeds_tensorflow_python_and_numpy_as_t2t():
    """T2T's t2t_datagen.py set_random_seed: tf.set_random_seed too (a usr_dir's generator may
    draw from TensorFlow); it was Python's and numpy's only."""
    import numpy as np

    draws = []
    for _ in range(2):
        t2t_shards.seed_like_t2t_datagen(5)
        draws.append((tf.random.uniform([3]).numpy().tolist(), random.random(), np.random.rand()))
    assert draws[0] == draws[1]
