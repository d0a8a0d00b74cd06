"""Word dropout for a word-level source: train the rare-word classes on more than the rare words.

Not T2T. With one id per word (``text_encoding/word_encoder.py``), a test word unseen in
training is read as its shape class (``<unk-Cap-s>``...), whose embedding only the words seen
fewer than ``min_count`` times trained. Word dropout (as in Kiperwasser and Goldberg's
graph-based parser, 2016) replaces each training occurrence of a source id by its class with
probability ``alpha / (alpha + count(id))``, where ``count`` is the id's frequency in the
training records: rare words are often replaced, frequent ones almost never. The hparam is
``word_dropout_alpha`` (0: off). Evaluation and decoding never replace anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.data import records
from t2t_repro.hparam import HParamsError


def source_id_counts(shards: Sequence[str], vocab_size: int) -> np.ndarray:
    """How often each source id occurs in the records of ``shards`` (int64 [vocab_size])."""
    counts = np.zeros([vocab_size], np.int64)
    ds = tf.data.TFRecordDataset(list(shards)).map(records.parse_example_fn(("inputs",)))
    for ids in ds.map(lambda ex: ex["inputs"]).unbatch().batch(65536).as_numpy_iterator():
        counts += np.bincount(ids[ids < vocab_size], minlength=vocab_size)
    return counts


def replacement_probabilities(counts: np.ndarray, class_ids: Sequence[int], alpha: float):
    """``alpha / (alpha + count)`` for ids that have a class other than themselves, else 0."""
    class_ids = np.asarray(class_ids)
    has_class = class_ids != np.arange(len(class_ids))
    return np.where(has_class, alpha / (alpha + counts.astype(np.float64)), 0.0)


def replaced_share(counts: np.ndarray, class_ids: Sequence[int], alpha: float) -> float:
    """The expected fraction of training source words that word dropout replaces."""
    probs = replacement_probabilities(counts, class_ids, alpha)
    return float((probs * counts).sum() / max(1, counts.sum()))


def make_word_dropout(
    class_ids: Sequence[int] | None,
    counts: np.ndarray | None,
    alpha: float,
    seed: int | None = None,
) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """A dataset transformation that replaces source ids by their classes (module docstring).

    ``class_ids[i]`` is the class of source id ``i`` (``i`` itself when it has none). The
    random draws come from ``tf.data.Dataset.random``, so a checkpointed input position
    resumes the same stream."""
    if class_ids is None:
        raise HParamsError(
            f"word_dropout_alpha={alpha} needs a problem with a word-level source vocabulary "
            "(e.g. wsj_parsing_ptb_sample_words); this problem has none. Drop the hparam."
        )
    probs = tf.constant(replacement_probabilities(counts, class_ids, alpha), tf.float32)
    classes = tf.constant(np.asarray(class_ids), tf.int32)

    def replace(example: dict, draw: tf.Tensor) -> dict:
        ids = example["inputs"]
        uniform = tf.random.stateless_uniform(tf.shape(ids), seed=tf.stack([draw, 0]))
        chosen = uniform < tf.gather(probs, ids)
        out = dict(example)
        out["inputs"] = tf.where(chosen, tf.gather(classes, ids), ids)
        return out

    def transform(ds: tf.data.Dataset) -> tf.data.Dataset:
        draws = tf.data.Dataset.random(seed=seed)
        return tf.data.Dataset.zip((ds, draws)).map(replace, num_parallel_calls=tf.data.AUTOTUNE)

    return transform
