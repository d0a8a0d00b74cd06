"""Word dropout (hparam ``word_dropout_alpha``): training source words replaced by their shape
class with probability alpha / (alpha + count), never at evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.data import records
from t2t_repro.data.input_pipeline import EVAL, TRAIN, make_dataset
from t2t_repro.data.word_dropout import (
    make_word_dropout,
    replaced_share,
    replacement_probabilities,
    source_id_counts,
)
from t2t_repro.hparam import HParamsError
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.text_encoding.word_encoder import WordTextEncoder
from tests.tools import SMALL_BATCH_SHUFFLE

TOKENS = ["<pad>", "<EOS>", "<UNK>", "<unk-ed>", "<unk>", "the", ".", "walked", "?"]


def test_class_ids_map_words_to_their_class_and_keep_the_rest():
    classes = WordTextEncoder(tokens=TOKENS).class_ids(keep=[".", "?"])
    # reserved 0-2 and the classes 3-4 stay; the -> <unk>, walked -> <unk-ed>; punctuation stays
    assert classes == [0, 1, 2, 3, 4, 4, 6, 3, 8]


def test_replacement_probabilities_follow_the_counts():
    counts = np.array([0, 0, 0, 5, 5, 1000, 400, 2, 3])
    classes = [0, 1, 2, 3, 4, 4, 6, 3, 8]
    probs = replacement_probabilities(counts, classes, alpha=0.25)
    assert probs[7] == pytest.approx(0.25 / 2.25)  # a word seen twice: 1/9
    assert probs[5] == pytest.approx(0.25 / 1000.25)
    assert probs[[0, 1, 2, 3, 4, 6, 8]].tolist() == [0.0] * 7  # nothing to replace them by
    assert replaced_share(counts, classes, 0.25) == pytest.approx(
        (1000 * 0.25 / 1000.25 + 2 / 9) / counts.sum()
    )


def _write(path, examples):
    records.write_records_atomically(str(path), (records.serialize_example(e) for e in examples))


def test_counts_come_from_the_training_records(tmp_path):
    _write(tmp_path / "a", [{"inputs": [5, 7, 6, 1], "targets": [3, 1]}])
    _write(tmp_path / "b", [{"inputs": [5, 5, 1], "targets": [3, 1]}])
    counts = source_id_counts([str(tmp_path / "a"), str(tmp_path / "b")], vocab_size=9)
    assert counts.tolist() == [0, 2, 0, 0, 0, 3, 1, 1, 0]


def _stream(transform, n):
    """The ``n`` transformed examples in order, read as one batch of them (one at a time, the
    three streams of the test below were ~2 core-s)."""
    example = {"inputs": tf.constant([5, 7, 6, 1], tf.int32), "targets": tf.constant([9, 1])}
    ds = transform(tf.data.Dataset.from_tensors(example).repeat(n))
    (batch,) = ds.batch(n).as_numpy_iterator()
    return list(zip(batch["inputs"].tolist(), batch["targets"].tolist(), strict=True))


def test_word_dropout_replaces_rare_words_by_their_class():
    counts = np.array([0, 4000, 0, 0, 0, 2000, 4000, 2, 0])
    classes = [0, 1, 2, 3, 4, 4, 6, 3, 8]
    out = _stream(make_word_dropout(classes, counts, alpha=2.0, seed=7), 2000)
    assert {tuple(t) for _, t in out} == {(9, 1)}  # targets untouched
    assert {i[2] for i, _ in out} == {6} and {i[3] for i, _ in out} == {1}
    assert {i[1] for i, _ in out} == {7, 3}  # walked or its class <unk-ed>
    assert {i[0] for i, _ in out} <= {5, 4}
    walked_replaced = np.mean([i[1] == 3 for i, _ in out])  # p = 2 / (2 + 2) = 0.5
    assert 0.44 < walked_replaced < 0.56
    assert np.mean([i[0] == 4 for i, _ in out]) < 0.01  # p = 2 / 2002
    assert out == _stream(make_word_dropout(classes, counts, alpha=2.0, seed=7), 2000)
    assert out != _stream(make_word_dropout(classes, counts, alpha=2.0, seed=8), 2000)


def test_word_dropout_needs_a_word_level_source():
    with pytest.raises(HParamsError, match="needs a problem with a word-level source"):
        make_word_dropout(None, None, alpha=0.25)


def test_negative_alpha_is_refused():
    from t2t_repro.hparams_lib import checks as hparams_checks

    hp = create_hparams("transformer_tiny", "word_dropout_alpha=-1", input_vocab_size=9)
    with pytest.raises(HParamsError, match="word_dropout_alpha=-1.0 must be >= 0"):
        hparams_checks.validate(hp)


@pytest.mark.slow
def test_make_dataset_applies_it_to_training_only(tmp_path):
    _write(tmp_path / "train-00000-of-00001", [{"inputs": [7, 7, 7, 7, 1], "targets": [3, 1]}])
    hp = create_hparams(
        "transformer_tiny", f"batch_size=64,{SMALL_BATCH_SHUFFLE}", input_vocab_size=9
    )
    transform = make_word_dropout(list(range(7)) + [3, 8], np.full(9, 1), alpha=1e9, seed=1)
    pattern = str(tmp_path / "train-*")
    train = next(iter(make_dataset(pattern, TRAIN, hp, augment=transform, seed=1)))
    rows = train["inputs"].numpy().tolist()  # copies of the one example (training repeats)
    assert len(rows) > 1 and all(r == [3, 3, 3, 3, 1] for r in rows)  # p ~ 1: all replaced
    dev = next(iter(make_dataset(pattern, EVAL, hp, augment=transform)))
    assert dev["inputs"].numpy().tolist() == [[7, 7, 7, 7, 1]]
