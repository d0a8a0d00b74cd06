"""XLA beam search reorders only the written prefix of the self-attention cache: same results."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.beam_search import gather_beams
from t2t_repro.decoding.prefix_reorder import prefix_lengths, prefix_reorder
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.decoding.tree_constraint import TreeConstraint
from t2t_repro.parsing.linearize import target_inventory
from t2t_repro.text_encoding.token_encoder import TokenTextEncoder
from tests.model_utils import build_model


def test_prefix_lengths():
    assert prefix_lengths(70) == [16, 32, 48, 64, 70]
    assert prefix_lengths(64) == [16, 32, 48, 64]
    assert prefix_lengths(9) == [9]


def test_reorder_equals_the_full_gather_when_only_the_prefix_is_written():
    rng = np.random.default_rng(0)
    buffer = np.zeros([2, 3, 2, 40, 4], np.float32)  # [B, beam, h, L, d]
    buffer[:, :, :, :21] = rng.normal(size=[2, 3, 2, 21, 4])  # written: positions 0..20
    states = {"layer_0": {"self_attention": (tf.constant(buffer), tf.constant(-buffer))}}
    states["tree"] = {"depth": tf.constant(rng.integers(0, 9, size=[2, 3]), tf.int32)}
    parents = tf.constant([[2, 2, 0], [1, 0, 1]], tf.int32)
    full = tf.nest.map_structure(lambda s: gather_beams(s, parents), states)
    got = tf.function(prefix_reorder(("self_attention",)), jit_compile=True)(
        states, parents, tf.constant(20)
    )
    tf.nest.map_structure(lambda a, b: np.testing.assert_array_equal(a, b), got, full)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(3)
    return build_model("transformer_tiny", vocab_size=60)


def test_xla_search_ids_and_scores_do_not_change(model):
    inputs = np.random.default_rng(0).integers(3, 60, size=(6, 20)).astype(np.int32)
    inputs[:, -1] = 1
    results = []
    for prefix in (True, False):
        config = SearchConfig(
            beam_size=4,
            alpha=0.6,
            extra_length=40,
            use_xla=True,
            eos_id=-1,  # never emitted: every step runs, the prefix grows to the whole buffer
            return_beams=True,
            prefix_reorder=prefix,
        )
        ids, scores = Searcher(model, config)(inputs)
        results.append((ids.numpy(), scores.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert (results[0][0][:, 0, 1:] != 0).sum() > 6 * 17  # real outputs, past one prefix


def test_tree_constrained_xla_search_does_not_change():
    tokens = target_inventory(["S NP DT NN /NP VP VBD /VP . /S"])
    encoder = TokenTextEncoder(tokens=tokens)
    constraint = TreeConstraint(encoder.tokens)
    keras.utils.set_random_seed(4)
    parser = build_model(vocab_size=40, target_vocab_size=len(encoder.tokens))
    words = [["w"] * 9 + ["."], ["Dogs", "run", "fast"]]
    inputs = np.zeros([2, 11], np.int32)
    inputs[0, :11] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 1]
    inputs[1, :4] = [15, 16, 17, 1]
    classes = np.stack([constraint.word_classes(w, 11) for w in words])
    num_words = np.array([len(w) for w in words], np.int32)
    results = []
    for prefix in (True, False):
        config = SearchConfig(
            beam_size=3, alpha=0.3, extra_length=30, use_xla=True, prefix_reorder=prefix
        )
        ids, scores = Searcher(parser, config, constraint)(inputs, classes, num_words)
        results.append((ids.numpy(), scores.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
