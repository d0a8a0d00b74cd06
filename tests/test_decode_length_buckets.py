"""Inputs padded up to a few length buckets decode exactly as at their own length (T2T's
decode length, ``tensor2tensor/models/transformer.py``, ``_fast_decode``), with a bounded
number of traced functions; the encoder-decoder cache kept out of the beam state changes
nothing."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig, Searcher, bucket_length, search
from tests.fresh_process import run_in_fresh_process
from tests.model_utils import build_model
from tests.tool_server import GRAPPLER_OFF_ENV

# Input lengths in buckets 8, 16 and 24: both sides of each bucket's edge (8|9, 16|17), so
# each bucket holds a padded length (3 in 8, with a row of EOS alone; 9 in 16; 17 in 24) and
# the first two an unpadded one. The exact searcher traces (and XLA compiles) once per
# length, the bucketed one once per bucket: every length from 3 to 18 took 19 traces,
# (3, 5, 8, 9, 12, 16, 17, 18) 11, these 8.
LENGTHS = (3, 8, 9, 16, 17)
# Under XLA each trace is also a compile (~0.75 core-s each, AMD EPYC Zen 3): one bucket edge
# (8|9) shows the padded lengths decode as their own there too (3 in 8 with its row of EOS
# alone, 9 in 16) and that the compiles are bounded (2 against 3); the other edges are the
# same bucketing, checked above without XLA.
XLA_LENGTHS = (3, 8, 9)


def random_batch(rng, length: int) -> np.ndarray:
    """Three inputs of ``length`` padded positions (EOS included), one of them shorter."""
    batch = np.zeros([3, length], np.int32)
    for row, real in enumerate((length, length, max(1, length - 2))):
        batch[row, : real - 1] = rng.integers(2, 40, size=real - 1)
        batch[row, real - 1] = 1
    return batch


def make_model():
    """One layer: every mask a padded input meets (encoder self-attention, encoder-decoder
    attention, the decoder's cache) is in it; a second layer made the traces ~35% dearer."""
    tf.keras.utils.set_random_seed(3)
    return build_model(
        "transformer_tiny", "hidden_size=32,filter_size=48,num_heads=4,num_hidden_layers=1"
    )


@pytest.fixture(scope="module")
def model():
    return make_model()


def test_bucket_length():
    assert [bucket_length(n, (8, 16)) for n in (1, 8, 9, 16, 17)] == [8, 8, 16, 16, 17]
    assert bucket_length(5, ()) == 5


@pytest.mark.slow
@pytest.mark.parametrize("beam_size,use_xla", [(4, False), (4, True), (1, False)])
def test_buckets_keep_ids_and_bound_traces(beam_size, use_xla):
    # In a fresh process: XLA keeps each of the 8 compiles (~70 MB) for the life of the
    # process, and even without XLA 19 traced searches kept 180-300 MB in the test process.
    # Without Grappler (tests/grappler.py): both searches of each comparison run alike.
    env = {GRAPPLER_OFF_ENV: "1"}
    run_in_fresh_process(check_buckets_keep_ids_and_bound_traces, beam_size, use_xla, env=env)


def check_buckets_keep_ids_and_bound_traces(beam_size, use_xla):
    model = make_model()
    config = dict(beam_size=beam_size, alpha=0.6, extra_length=3, use_xla=use_xla)
    bucketed = Searcher(model, SearchConfig(**config))
    exact = Searcher(model, SearchConfig(**config, length_buckets=()))
    rng = np.random.default_rng(0)
    lengths = XLA_LENGTHS if use_xla else LENGTHS
    for length in lengths:
        inputs = random_batch(rng, length)
        ids, scores = bucketed(inputs)
        want_ids, want_scores = exact(inputs)
        assert ids.shape[2] == length + 3 + 1  # T2T's decode length from the true length
        np.testing.assert_array_equal(ids.numpy(), want_ids.numpy())
        np.testing.assert_allclose(scores.numpy(), want_scores.numpy(), rtol=1e-6, atol=1e-6)
    assert exact.traces == len(lengths)
    assert bucketed.traces == (2 if use_xla else 3)


def test_forced_steps_run_the_whole_decode_length(model):
    """With an end id the model never emits, the search runs T2T's decode length exactly (the
    true input length + extra), not the bucket's."""
    config = SearchConfig(beam_size=2, extra_length=4, eos_id=-1)
    inputs = random_batch(np.random.default_rng(1), 5)
    # One step more than the decode length is allowed would show as a token in column 10.
    ids, _ = search(model, config, tf.constant(np.pad(inputs, [[0, 0], [0, 3]])), 9, None, 12)
    assert ids.shape[2] == 13 and not ids.numpy()[:, :, 10:].any()
    assert (ids.numpy()[:, :, 1:10] != 0).any(axis=(0, 1)).all()  # every step produced ids


def test_constant_cache_is_not_in_the_loop_state(model):
    """The encoder-decoder keys/values reach the step without being beam-reordered: the beam
    search's loop carries only the self-attention buffers."""
    from t2t_repro.decoding.constant_cache import hoist_constants

    cache = model.init_cache(tf.constant(random_batch(np.random.default_rng(2), 6)), 8)
    step, state = hoist_constants(model.decode_step, cache, model.CONSTANT_CACHE_KEYS, 4)
    assert "encoder_bias" not in state
    assert all(set(layer) == {"self_attention"} for layer in state.values())
    ids = tf.zeros([12, 9], tf.int32)
    logits, new_state = step(
        ids, tf.constant(0), tf.nest.map_structure(lambda t: tf.repeat(t, 4, axis=0), state)
    )
    assert logits.shape == (12, model.hparams.target_vocab_size)
    assert tf.nest.map_structure(lambda t: t.shape, new_state) == tf.nest.map_structure(
        lambda t: tf.repeat(t, 4, axis=0).shape, state
    )
