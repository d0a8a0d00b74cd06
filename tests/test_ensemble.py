"""Ensemble decoding: averaged probabilities, the searches unchanged, t2t-decoder's flag."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.ensemble import Ensemble, EnsembleError
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.parsing.linearize import PTB_POS_TAGS, target_inventory
from t2t_repro.parsing.tree_constraint import TreeConstraint
from t2t_repro.text_encoding.token_encoder import TokenTextEncoder
from tests.grappler import grappler_off_env
from tests.model_utils import build_model, shared_toy_checkpoint, toy_checkpoint_dir
from tests.shared_build import build_once
from tests.tools import PLUMBING_MODEL, run_tool

# An ensemble against its members, ours against ours: both sides run alike without Grappler
# (tests/grappler.py).
pytestmark = pytest.mark.usefixtures("without_grappler")

INPUTS = np.array([[5, 9, 12, 7, 1], [8, 3, 1, 0, 0]], np.int32)


def _models(n: int, vocab: int = 40, target_vocab: int | None = None, first_seed: int = 0):
    """Members of width 32 with one decoder layer and no encoder layer (PLUMBING_MODEL): the
    ensemble's averaging and the searches over it are the same for any member, and a member's
    traces cost its layers. Seeded ``first_seed``, ``first_seed + 1``, ..."""
    models = []
    for seed in range(first_seed, first_seed + n):
        keras.utils.set_random_seed(seed)
        models.append(
            build_model(overrides=PLUMBING_MODEL, vocab_size=vocab, target_vocab_size=target_vocab)
        )
    return models


def _copy(model):
    twin = build_model(
        overrides=PLUMBING_MODEL,
        vocab_size=model.hparams.input_vocab_size,
        target_vocab_size=model.hparams.target_vocab_size,
    )
    for target, source in zip(twin.weights, model.weights, strict=True):
        target.assign(source)
    return twin


@pytest.fixture(scope="module")
def member_and_twin():
    """``_models(1)``'s member (seed 0, vocabulary 40) and its weight copy, built once for the
    module's tests, which only read them (~0.2 CPU-s a pair)."""
    (model,) = _models(1)
    return model, _copy(model)


def _first_step_log_probs(model) -> np.ndarray:
    cache = model.init_cache(tf.constant(INPUTS), 6)
    ids = tf.zeros([2, 7], tf.int32)
    logits, _ = model.decode_step(ids, 0, cache)
    return tf.nn.log_softmax(tf.cast(logits, tf.float32)).numpy()


@pytest.mark.slow
def test_step_is_the_log_of_the_members_mean_probability(member_and_twin):
    a, (b,) = member_and_twin[0], _models(1, first_seed=1)  # _models(2)'s two members
    ensemble = Ensemble([a, b])
    got, of_a = _first_step_log_probs(ensemble), _first_step_log_probs(a)
    expected = np.log((np.exp(of_a) + np.exp(_first_step_log_probs(b))) / 2)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.exp(got).sum(-1), 1.0, rtol=1e-5)
    # Different members really differ: the mean is neither of them.
    assert not np.allclose(got, of_a, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("beam_size,use_xla", [(1, False), (3, False), (3, True)])
def test_an_ensemble_of_one_model_twice_decodes_as_the_model(member_and_twin, beam_size, use_xla):
    model, twin = member_and_twin
    config = SearchConfig(beam_size=beam_size, alpha=0.6, extra_length=5, use_xla=use_xla)
    single_ids, single_scores = Searcher(model, config)(INPUTS)
    ids, scores = Searcher(Ensemble([model, twin]), config)(INPUTS)
    np.testing.assert_array_equal(ids.numpy(), single_ids.numpy())
    np.testing.assert_allclose(scores.numpy(), single_scores.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_tree_constrained_ensemble_search_gives_trees_over_the_words():
    tokens = target_inventory(["S NP DT NN /NP VP VBD /VP . /S"])
    encoder = TokenTextEncoder(tokens=tokens)
    constraint = TreeConstraint(encoder.tokens)
    models = _models(2, target_vocab=len(encoder.tokens))
    words = [["The", "cat", "sat", "."], ["Dogs", "run"]]
    classes = np.stack([constraint.word_classes(w, INPUTS.shape[1]) for w in words])
    num_words = np.array([len(w) for w in words], np.int32)
    config = SearchConfig(beam_size=3, alpha=0.3, extra_length=20)
    ids, _ = Searcher(Ensemble(models), config, constraint)(INPUTS, classes, num_words)
    for row, sentence in zip(ids.numpy()[:, 0], words, strict=True):
        out = [int(i) for i in row[1:]]
        out = out[: out.index(1)]  # up to EOS: the constraint ends every hypothesis
        text = encoder.decode(out).split()
        slots = [t for t in text if t in PTB_POS_TAGS]
        openers = [t for t in text if not t.startswith("/") and t not in PTB_POS_TAGS]
        assert len(slots) == len(sentence) and slots[-1 if sentence[-1] == "." else 0], text
        assert len(openers) == sum(t.startswith("/") for t in text) > 0, text


def test_members_must_share_the_vocabularies(member_and_twin):
    a = member_and_twin[0]  # vocabulary 40
    (b,) = _models(1, vocab=41)
    with pytest.raises(EnsembleError, match="input_vocab_size"):
        Ensemble([a, b])
    with pytest.raises(EnsembleError, match="at least two"):
        Ensemble([a])


@pytest.fixture(scope="module")
def two_runs():
    """Two toy runs, made once for the test run (the tests only read them): the run's toy
    checkpoint (step 7, seed 1: tests/model_utils.py) and one of seed 2 at step 9."""
    root = build_once("ensemble_second_run", lambda root: toy_checkpoint_dir(root, step=9, seed=2))
    return shared_toy_checkpoint(), root


def _decode(first, *extra):
    return run_tool(
        "t2t-decoder",
        "--problem=translate_toy",
        f"--data_dir={first / 'data'}",
        "--decode_hparams=beam_size=2,extra_length=4",
        *extra,
        timeout=600,
        env=grappler_off_env(),  # as the module's in-process runs (tests/grappler.py)
    )


@pytest.mark.slow
def test_decoder_cli_decodes_an_ensemble_of_two_runs(two_runs, tmp_path):
    first, second = two_runs
    src = tmp_path / "src"
    src.write_text("the dog sees a cat .\nmany cats run .\n")
    outputs = {}
    for name, checkpoints in {
        "one": f"{first / 'train'}",
        "two": f"{second / 'train' / 'ckpt-9'}",
        "both": f"{first / 'train'},{second / 'train' / 'ckpt-9'}",
    }.items():
        out = _decode(
            first,
            f"--checkpoint_path={checkpoints}",
            f"--decode_from_file={src}",
            f"--decode_to_file={tmp_path / name}",
            "--decode_hparams=beam_size=2,extra_length=4,return_beams=True,write_beam_scores=True",
        )
        assert out.returncode == 0, out.stderr[-3000:]
        outputs[name] = (tmp_path / name).read_text().splitlines()
    assert f"restored {first / 'train' / 'ckpt-7'},{second / 'train' / 'ckpt-9'}" in out.stderr
    assert len(outputs["both"]) == 2
    # The ensemble is a third model: its scores are neither member's.
    assert outputs["both"] != outputs["one"] and outputs["both"] != outputs["two"]


@pytest.mark.slow
def test_decoder_cli_reports_a_member_without_hparams(two_runs, tmp_path):
    first, _ = two_runs
    stray = tmp_path / "stray"
    stray.mkdir()
    out = _decode(
        first,
        f"--checkpoint_path={first / 'train'},{stray}",
        "--decode_interactive",
    )
    assert out.returncode == 1 and "hparams.json" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_exporter_refuses_an_ensemble(two_runs, tmp_path):
    first, second = two_runs
    out = run_tool(
        "t2t-exporter",
        "--problem=translate_toy",
        f"--data_dir={first / 'data'}",
        f"--checkpoint_path={first / 'train'},{second / 'train'}",
        f"--export_dir={tmp_path / 'export'}",
        timeout=600,
    )
    assert out.returncode == 1 and "takes one" in out.stderr, out.stderr[-2000:]
