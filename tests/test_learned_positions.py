"""Learned positions (``pos=emb``) are T2T's: one table a side (``inputs_positional_embedding``,
``targets_positional_embedding``) of ``max_length`` rows, no signal past the last row, under
T2T's default initializer. A T2T 1.15.7 run with them (tests/data/t2t_reference,
``tools/t2t_reference/learned_positions_reference.py``: tables of 5 rows, sources of 7
positions, decodes of up to 15) imports and gives T2T's logits and decodes."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig, Searcher
from tests.model_utils import assert_cached_steps_match_full_pass, build_model
from tests.t2t_fixtures import REFERENCE, load_imported, reference, shared_import

EMB_DIR = REFERENCE / "t2t_learned_positions_train_dir"
DECODES = "t2t_1.15.7_learned_positions_decodes.npz"
TINY = "hidden_size=16,filter_size=24,num_heads=2,num_hidden_layers=1,pos=emb,max_length=4"


@pytest.fixture(scope="module")
def imported():
    out, result = shared_import(EMB_DIR)  # the run's one import of it (read only)
    return load_imported(out), result


@pytest.fixture(scope="module")
def tiny():
    """A TINY model for the tests that only read it (~0.15 CPU-s a build)."""
    return build_model("transformer_tiny", TINY, vocab_size=20)


def test_each_side_has_its_table_of_max_length_rows_and_nothing_past_it(tiny):
    model = tiny
    inputs, targets = model.input_positional, model.positional
    assert inputs is not targets
    assert inputs.position_embeddings.shape == targets.position_embeddings.shape == (4, 16)
    signal = targets.signal(2, 5).numpy()  # positions 2..6: rows 2 and 3, then none
    np.testing.assert_array_equal(signal[:2], targets.position_embeddings.numpy()[2:])
    assert not signal[2:].any()
    at = inputs.signal_at(tf.constant([5.0, 0.0, 3.0])).numpy()
    assert not at[0].any() and (at[1:] == inputs.position_embeddings.numpy()[[0, 3]]).all()
    # T2T's language model has the targets' table alone; the timing signal has none.
    hp = model.hparams.copy()
    hp.add_hparam("has_input", False)
    lm = type(model)(hp)
    lm.build()
    assert lm.input_positional is lm.positional
    assert [w.path for w in lm.weights if "position" in w.path] == [
        "transformer/targets_positional/position_embedding"
    ]
    timing = build_model("transformer_tiny", "hidden_size=16,num_heads=2", vocab_size=20)
    assert not [w for w in timing.weights if "position" in w.path]


def test_cached_steps_past_the_table_equal_the_full_pass(tiny):
    """Inputs of 6 positions and 7 decoded ones against tables of 4: the cached steps give the
    teacher-forced logits where the tables end too."""
    model = tiny
    inputs = tf.constant([[5, 6, 7, 8, 9, 1], [8, 9, 1, 0, 0, 0]])
    ids = np.zeros([2, 8], np.int32)
    ids[:, 1:] = np.random.default_rng(0).integers(2, 20, size=[2, 7])
    assert_cached_steps_match_full_pass(model, inputs, ids)


def test_import_logits_equal_t2t(imported):
    """Teacher-forced: sources of 7 positions and targets of 6 run past both tables."""
    model, result = imported
    assert result.step == 300
    hp = result.imported.hparams
    assert (hp.pos, hp.max_length) == ("emb", 5)
    ref = reference(DECODES)
    logits = model({"inputs": ref["inputs"], "targets": ref["targets"]}).numpy()
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)


@pytest.mark.parametrize("name, beam", [("greedy", 1), ("beam3", 3), ("beam3_all", 3)])
def test_decodes_equal_t2t(imported, name, beam):
    """T2T's cached _fast_decode, its position table padded with zeros past its 5 rows."""
    model, _ = imported
    ref = reference(DECODES)
    config = SearchConfig(
        beam_size=beam,
        alpha=float(ref["alpha"]),
        extra_length=int(ref["extra_length"]),
        return_beams=name.endswith("_all"),
    )
    ids, scores = Searcher(model, config)(ref["inputs"])
    ids, scores = ids.numpy()[:, :, 1:], scores.numpy()
    want_ids = ref[f"{name}_ids"]
    if want_ids.ndim == 2:
        want_ids, ids, scores = want_ids[:, None], ids[:, :1], scores[:, :1]
    width = min(ids.shape[-1], want_ids.shape[-1])
    np.testing.assert_array_equal(ids[..., :width], want_ids[..., :width])
    assert not ids[..., width:].any() and not want_ids[..., width:].any()
    np.testing.assert_allclose(scores, ref[f"{name}_scores"].reshape(scores.shape), atol=1e-3)


@pytest.mark.slow
def test_ctranslate2_decodes_the_imported_t2t_model_like_ours(imported, tmp_path):
    """The export's two position tables are T2T's, zero past their rows: CTranslate2's decodes
    of the imported model are ours (alpha 0: its length penalty is another)."""
    from t2t_repro.decoding.ctranslate2_search import CTranslate2Searcher
    from t2t_repro.serving.ctranslate2_export import export_ctranslate2

    model, _ = imported
    export_ctranslate2(model, str(tmp_path / "ct2"), metadata=dict(problem="t2t_emb"))
    inputs = reference(DECODES)["inputs"]
    config = SearchConfig(beam_size=3, alpha=0.0, extra_length=8)
    want_ids, want_scores = Searcher(model, config)(inputs)
    ids, scores = CTranslate2Searcher(str(tmp_path / "ct2"), 3, 0.0, 8, intra_threads=1)(inputs)
    width = min(ids.shape[-1], want_ids.shape[-1])
    np.testing.assert_array_equal(ids[:, 0, :width], want_ids.numpy()[:, 0, :width])
    np.testing.assert_allclose(scores, want_scores.numpy()[:, :1], atol=1e-4)


def test_a_run_saved_before_the_change_says_why_it_cannot_resume(tmp_path):
    """A run saved with the retired layout (one table of max_position_embeddings rows): its
    hparams.json's retired name is dropped when read, and its checkpoint is refused with the
    reason, not as a corrupt file."""
    from t2t_repro.checkpoints.errors import CheckpointError
    from t2t_repro.checkpoints.loading import saved_hparams
    from t2t_repro.checkpoints.training import TrainingCheckpoint

    old = build_model("transformer_tiny", TINY.replace("max_length=4", "max_length=16"), 20)
    saved = old.hparams.copy()
    saved.add_hparam("max_position_embeddings", 16)
    (tmp_path / "hparams.json").write_text(saved.to_json())
    assert "max_position_embeddings" not in saved_hparams(str(tmp_path))
    optimizer = keras.optimizers.Adam()
    optimizer.build(old.trainable_variables)
    TrainingCheckpoint(str(tmp_path), old, optimizer, 5).save(1)
    new = build_model("transformer_tiny", TINY, vocab_size=20)
    optimizer = keras.optimizers.Adam()
    optimizer.build(new.trainable_variables)
    with pytest.raises(CheckpointError, match="cannot be restored at all: train it anew") as e:
        TrainingCheckpoint(str(tmp_path), new, optimizer, 5).restore_latest()
    assert "\n" not in str(e.value) and "corrupt" not in str(e.value)
