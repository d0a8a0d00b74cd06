"""What the T2T reference scripts record of the shards T2T 1.15.7's datagen writes: each
record's feature ids, and their sha256 as ``tests/t2t_records.py`` computes it. T2T serializes a
record's feature map in its process's hash order, so records are compared by their ids (which
hold the shuffle), not by their bytes. Imported by the ``make_t2t_*_reference.py`` scripts,
which run as files in T2T's virtualenv (this folder is on their ``sys.path``)."""

import hashlib
import json


def shard_ids(tf, path: str, features=("inputs", "targets")) -> list:
    """Each record's ids in file order: a list of the ``features``' ids, or (``features``
    None) a dict of every feature's, by name."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        if features is None:
            found.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
        else:
            found.append([list(feature[k].int64_list.value) for k in features])
    return found


def ids_digest(records: list) -> str:
    """The sha256 of ``records`` as compact JSON."""
    return hashlib.sha256(json.dumps(records, separators=(",", ":")).encode()).hexdigest()
