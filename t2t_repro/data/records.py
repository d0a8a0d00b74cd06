"""T2T's on-disk example format and shard naming, shared by datagen and the input pipeline.

Each record is a ``tf.train.Example`` whose features are int64 lists (``inputs``,
``targets``, EOS-terminated). Shards are named ``<problem>-<split>-000NN-of-000MM`` in
``data_dir``, exactly as T2T names them, so T2T data dirs and ours are interchangeable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_path
from t2t_repro.errors import DataError

TRAIN, DEV, TEST = "train", "dev", "test"
SPLITS = (TRAIN, DEV, TEST)


def sharded_name(base_name: str, index: int, num_shards: int) -> str:
    """T2T's name of one of ``num_shards`` files (``generator_utils.py, sharded_name``)."""
    return f"{base_name}-{index:05d}-of-{num_shards:05d}"


def shard_name(problem_name: str, split: str, index: int, num_shards: int) -> str:
    return sharded_name(f"{problem_name}-{split}", index, num_shards)


def shard_paths(data_dir: str, problem_name: str, split: str, num_shards: int) -> list[str]:
    return [
        os.path.join(data_dir, shard_name(problem_name, split, i, num_shards))
        for i in range(num_shards)
    ]


def filepattern(data_dir: str, problem_name: str, split: str) -> str:
    return os.path.join(data_dir, f"{problem_name}-{split}-*")


def existing_shards(data_dir: str, problem_name: str, split: str) -> list[str]:
    """Finished shards on disk for a split (temp files of interrupted writes excluded)."""
    return sorted(
        p for p in fileio.glob(filepattern(data_dir, problem_name, split)) if not p.endswith(".tmp")
    )


def to_example(features: Mapping[str, Iterable], allow_empty: bool = True) -> tf.train.Example:
    """A ``tf.train.Example`` of int, float or text lists, typed by each list's first value
    (T2T's ``generator_utils.to_example``); an empty list is an empty int64 list, or refused
    (``allow_empty=False``: T2T's, which reads the first value)."""
    feature = {}
    for name, values in features.items():
        values = list(values)
        if not values and not allow_empty:
            raise DataError(f"empty generated field {name!r}: every feature needs a value.")
        first = values[0] if values else 0
        if isinstance(first, (int, np.integer)):
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif isinstance(first, float):
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(first, (str, bytes)):
            values = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        else:
            raise DataError(
                f"feature {name!r}: value {first!r} of type {type(first).__name__} is not an "
                "int, float or string list."
            )
    return tf.train.Example(features=tf.train.Features(feature=feature))


def serialize_example(features: Mapping[str, Iterable], allow_empty: bool = True) -> bytes:
    """``to_example``'s bytes. Deterministic: map fields would otherwise be ordered by the hash
    seed, and shards must be byte-identical from run to run (docs/datagen.md)."""
    return to_example(features, allow_empty).SerializeToString(deterministic=True)


def write_records_atomically(path: str, serialized: Iterable[bytes]) -> int:
    """Write one shard to a temp file and rename it into place; returns the record count."""
    count = 0
    with atomic_path(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for record in serialized:
            writer.write(record)
            count += 1
    return count


def find_corrupt_record(paths: Sequence[str]) -> str | None:
    """``"<file>: <what TensorFlow says>"`` for the first shard that does not read back."""
    for path in paths:
        try:
            for _ in tf.data.TFRecordDataset(path):
                pass
        except tf.errors.OpError as e:
            return f"{path}: {str(e.message).strip().splitlines()[0][:200]}"
    return None


def parse_example_fn(feature_names: Sequence[str] = ("inputs", "targets")):
    """A tf.data map function: serialized Example -> {name: int32 vector}."""
    spec = {name: tf.io.VarLenFeature(tf.int64) for name in feature_names}

    @tf.autograph.experimental.do_not_convert  # no tensor control flow: traced as written
    def parse(serialized: tf.Tensor) -> dict[str, tf.Tensor]:
        parsed = tf.io.parse_single_example(serialized, spec)
        return {name: tf.cast(tf.sparse.to_dense(parsed[name]), tf.int32) for name in feature_names}

    return parse


def read_examples(path: str, feature_names: Sequence[str] = ("inputs", "targets")) -> list[dict]:
    """Every example of one file as python lists (for tests and small tools)."""
    parse = parse_example_fn(feature_names)
    return [
        {k: v.numpy().tolist() for k, v in parse(r).items()} for r in tf.data.TFRecordDataset(path)
    ]
