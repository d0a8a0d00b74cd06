"""The key/value cache gives the same logits as re-running the full decoder on the prefix."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.model_utils import (
    assert_cached_search_matches_uncached,
    assert_cached_steps_match_full_pass,
    build_model,
)

# Cached against uncached, ours against ours: both sides run alike without Grappler
# (tests/grappler.py).
pytestmark = pytest.mark.usefixtures("without_grappler")
SIZES = "hidden_size=32,filter_size=48,num_heads=4,num_hidden_layers=2"


@pytest.mark.slow
@pytest.mark.parametrize("hparams_set", ["transformer_base_v1", "transformer_tiny"])
def test_decode_step_matches_full_decoder(request, hparams_set):
    # transformer_tiny at these sizes is the module's model (any weights serve): one build less.
    if hparams_set == "transformer_tiny":
        model = request.getfixturevalue("seeded_model")
    else:
        model = build_model(hparams_set, SIZES)
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0]])
    length = 6
    rng = np.random.default_rng(0)
    ids = np.zeros([2, length + 1], np.int32)
    ids[:, 1:] = rng.integers(2, 50, size=[2, length])
    assert_cached_steps_match_full_pass(model, inputs, ids)


def test_model_config_round_trip(seeded_model):
    model = seeded_model  # any model: one built for the module (0.3 CPU-s, AMD EPYC Zen 3)
    clone = type(model).from_config(model.get_config())
    clone.build_for()
    assert clone.count_params() == model.count_params()


@pytest.fixture(scope="module")
def seeded_model():
    """The searches' model, built once for the module: its weights are seeded, so each case
    gets the same model it built for itself before (the searches only read it, as does the
    config round trip, whose clone draws its weights after these)."""
    keras.utils.set_random_seed(3)
    return build_model("transformer_tiny", SIZES)


@pytest.mark.slow
@pytest.mark.parametrize("beam_size,use_xla", [(1, False), (3, False), (3, True)])
def test_search_with_and_without_cache_agree(seeded_model, beam_size, use_xla):
    """Ids of two float paths (cached steps, the full decoder per prefix): equal unless two
    hypotheses tie to rounding, so the weights are seeded (they were whatever the process's RNG
    held, which changes with the order the test processes run tests in)."""
    model = seeded_model
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0], [11, 12, 13, 14, 1]])
    assert_cached_search_matches_uncached(model, inputs, beam_size, use_xla)
