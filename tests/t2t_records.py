"""What the T2T reference tests compare of a problem and its datagen: each shard record's feature
ids (T2T 1.15.7 serializes a record's feature map in its process's hash order, so the reference
scripts, tools/t2t_reference/make_t2t_*_reference.py, record ids, which hold the shuffle, not
bytes) and the problem hparams the scripts record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import tensorflow as tf

from t2t_repro.data import t2t_shards


def record_ids(path: Path, features: tuple[str, ...] | None = ("inputs", "targets")) -> list:
    """Each record's ids: a list of the ``features``' ids, or (``features`` None) a dict of
    every feature's, by name. Read without tf.data, which costs more than a small datagen."""
    found = []
    for record in t2t_shards.read_records(str(path)):
        feature = tf.train.Example.FromString(record).features.feature
        if features is None:
            found.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
        else:
            found.append([list(feature[k].int64_list.value) for k in features])
    return found


def ids_digest(path: Path, features: tuple[str, ...] | None = ("inputs", "targets")):
    """(records, sha256 of their ids as compact JSON), as the reference scripts write it."""
    records = record_ids(path, features)
    text = json.dumps(records, separators=(",", ":"))
    return len(records), hashlib.sha256(text.encode()).hexdigest()


def problem_facts(problem, data_dir: Path) -> dict:
    """The problem hparams, metrics, vocabulary file and splits, as the text-corpora and
    wiki_lm reference scripts record T2T's."""
    from t2t_repro.t2t_compat.hparam import HParams

    hp = problem.get_hparams(HParams(data_dir=str(data_dir)))
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_filename": problem.vocab_filename,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
    }
