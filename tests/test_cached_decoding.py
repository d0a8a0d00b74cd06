"""The key/value cache gives the same logits as re-running the full decoder on the prefix."""

import numpy as np
import pytest
import tensorflow as tf

from tests.model_utils import build_model


@pytest.mark.parametrize("hparams_set", ["transformer_base", "transformer_tiny"])
def test_decode_step_matches_full_decoder(hparams_set):
    model = build_model(
        hparams_set, "hidden_size=32,filter_size=48,num_heads=4,num_hidden_layers=2"
    )
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0]])
    length = 6
    rng = np.random.default_rng(0)
    ids = np.zeros([2, length + 1], np.int32)
    ids[:, 1:] = rng.integers(2, 50, size=[2, length])
    full = model({"inputs": inputs, "targets": tf.constant(ids[:, 1:])}).numpy()

    cache = model.init_cache(inputs, length)
    step = tf.function(model.decode_step, jit_compile=True)
    for i in range(length):
        logits, cache = step(tf.constant(ids), tf.constant(i), cache)
        np.testing.assert_allclose(logits.numpy(), full[:, i], atol=2e-4, rtol=1e-4)


def test_model_config_round_trip():
    model = build_model("transformer_tiny")
    clone = type(model).from_config(model.get_config())
    clone.build_for()
    assert clone.count_params() == model.count_params()


@pytest.mark.parametrize("beam_size,use_xla", [(1, False), (3, False), (3, True)])
def test_search_with_and_without_cache_agree(beam_size, use_xla):
    from t2t_repro.decoding.search import SearchConfig, Searcher

    model = build_model(
        "transformer_tiny", "hidden_size=32,filter_size=48,num_heads=4,num_hidden_layers=2"
    )
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0], [11, 12, 13, 14, 1]])
    config = dict(beam_size=beam_size, alpha=0.6, extra_length=4, use_xla=use_xla)
    ids, scores = Searcher(model, SearchConfig(**config))(inputs)
    ids_nc, scores_nc = Searcher(model, SearchConfig(**config, use_cache=False))(inputs)
    np.testing.assert_array_equal(ids_nc.numpy(), ids.numpy())
    np.testing.assert_allclose(scores_nc.numpy(), scores.numpy(), atol=1e-4)
