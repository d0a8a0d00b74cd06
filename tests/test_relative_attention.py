"""Relative self-attention (T2T's ``dot_product_relative``, Shaw et al. 2018) against T2T 1.15.7.

The train dir under tests/data/t2t_reference was made by T2T 1.15.7 itself: its
``transformer_relative_tiny`` at hidden 16 with ``max_relative_position=3``, trained 300 steps on
reversing sequences, and T2T's logits and decodes read back from that checkpoint
(tools/t2t_reference/relative_reference.py, README there). Logits agree within 1e-4 and decodes
id for id, as for the other T2T checkpoints (test_t2t_import.py).
"""

import json
from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.hparam import HParamsError
from t2t_repro.layers.relative_positions import relative_positions_matrix
from t2t_repro.t2t_import.hparams_map import map_hparams
from tests.model_utils import build_model
from tests.t2t_fixtures import REFERENCE, load_imported, reference, shared_import

RELATIVE_DIR = REFERENCE / "t2t_relative_train_dir"
SMALL = "hidden_size=16,filter_size=24,num_heads=2,max_relative_position=2"


@pytest.fixture(scope="module")
def imported():
    return shared_import(RELATIVE_DIR)  # the run's one import of it (read only)


@pytest.fixture(scope="module")
def t2t_model(imported):
    return load_imported(imported[0])


@pytest.fixture(scope="module")
def searcher_of(t2t_model):
    """config -> a ``Searcher`` of the imported model, one for the module, so a search traced
    for one test serves another (~0.3 CPU-s a trace, AMD EPYC Zen 3). The greedy search
    reads neither ``alpha`` nor ``return_beams`` (decoding/search.py): one for every value
    (test_decodes_equal_t2t's greedy search is the CTranslate2 test's)."""
    searchers = {}

    def searcher(config):
        if config.beam_size == 1:
            config = replace(config, alpha=0.0, return_beams=False)
        if config not in searchers:
            searchers[config] = Searcher(t2t_model, config)
        return searchers[config]

    return searcher


def test_positions_are_t2t_clipped_distances():
    """T2T's _generate_relative_positions_matrix: row clip(j - i, -m, m) + m; a decoding step
    at position i gets the row of that query (T2T's cache=True, keys up to i)."""
    full = relative_positions_matrix(4, 4, 2).numpy()
    np.testing.assert_array_equal(full, [[2, 3, 4, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 0, 1, 2]])
    step = relative_positions_matrix(1, 5, 2, query_position=3).numpy()
    np.testing.assert_array_equal(step, [[0, 0, 1, 2, 3]])


def test_sets_have_t2t_values():
    """Every hparam this project has equals T2T 1.15.7's in its three relative sets."""
    t2t_sets = json.loads((REFERENCE / "t2t_1.15.7_relative_hparams.json").read_text())
    sizes = {"input_vocab_size": 9, "target_vocab_size": 9, "target_space_id": 0}
    for name, values in t2t_sets.items():
        assert values["self_attention_type"] == "dot_product_relative"
        imported = map_hparams(values, name, sizes)
        assert imported.hparams_set == name
        assert imported.overrides == "", name
        assert imported.hparams.pos == "none"


def test_import_logits_equal_t2t(imported, t2t_model):
    out, result = imported
    assert result.step == 300 and result.with_optimizer
    assert result.imported.hparams_set == "transformer_relative_tiny"
    hp = result.imported.hparams
    assert (hp.self_attention_type, hp.max_relative_position, hp.pos) == (
        "dot_product_relative",
        3,
        "none",
    )
    ref = reference("t2t_1.15.7_relative_decodes.npz")
    logits = t2t_model({"inputs": ref["inputs"], "targets": ref["targets"]}).numpy()
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)


def until_eos(row):
    """The ids up to and including the first EOS (T2T's slow greedy decodes on after it)."""
    row = list(row)
    return row[: row.index(1) + 1] if 1 in row else row


@pytest.mark.parametrize(
    "name, beam, return_beams", [("greedy", 1, False), ("beam3", 3, False), ("beam3_all", 3, True)]
)
def test_decodes_equal_t2t(searcher_of, name, beam, return_beams):
    """Greedy (T2T: the full decoder per prefix) and beam (T2T: cached) decodes, the ids past
    max_relative_position included."""
    ref = reference("t2t_1.15.7_relative_decodes.npz")
    config = SearchConfig(
        beam_size=beam,
        alpha=float(ref["alpha"]),
        extra_length=int(ref["extra_length"]),
        return_beams=return_beams,
    )
    ids, scores = searcher_of(config)(ref["inputs"])
    ids, scores = ids.numpy()[:, :, 1:], scores.numpy()
    want_ids = ref[f"{name}_ids"]
    if want_ids.ndim == 2:
        want_ids, ids, scores = want_ids[:, None], ids[:, :1], scores[:, :1]
    got = [[until_eos(h) for h in row] for row in ids]
    assert got == [[until_eos(h) for h in row] for row in want_ids]
    assert max(len(h) for row in got for h in row) > 4  # distances beyond max_relative_position=3
    if f"{name}_scores" in ref:
        want = ref[f"{name}_scores"].reshape(scores.shape)
        np.testing.assert_allclose(scores, want, atol=1e-3, rtol=1e-5)


@pytest.fixture(scope="module")
def small_model():
    """A ``SMALL`` relative model, built once for the two tests that only read it (0.3 CPU-s
    a model, AMD EPYC Zen 3)."""
    return build_model("transformer_relative_tiny", SMALL)


def test_cached_steps_equal_the_full_decoder(small_model):
    """Decode step i sees the clipped distances of position i (up to 6 here, beyond the
    clipping at 2), as the teacher-forced pass does (T2T's fast decoding vs its full pass)."""
    model = small_model
    inputs = tf.constant([[5, 6, 7, 8, 9, 1, 0], [8, 9, 1, 0, 0, 0, 0]])
    ids = np.zeros([2, 8], np.int32)
    ids[:, 1:] = np.random.default_rng(0).integers(2, 50, size=[2, 7])
    full = model({"inputs": inputs, "targets": tf.constant(ids[:, 1:])}).numpy()
    cache = model.init_cache(inputs, 7)
    for i in range(7):
        logits, cache = model.decode_step(tf.constant(ids), tf.constant(i), cache)
        np.testing.assert_allclose(logits.numpy(), full[:, i], atol=2e-4, rtol=1e-4)


def test_relative_needs_a_distance_and_a_known_type():
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.hparams_lib.checks import validate

    sizes = dict(input_vocab_size=50, target_vocab_size=50)  # build_model's, without a model
    hp = create_hparams("transformer_relative_tiny", SMALL, **sizes)
    for overrides, message in (
        ("max_relative_position=0", "needs max_relative_position > 0"),
        ("self_attention_type=dot_product_relative_v2", "self_attention_type"),
        ("attention_value_channels=8", "attention_key_channels == attention_value_channels"),
    ):
        with pytest.raises(HParamsError, match=message):
            validate(hp.copy().parse(overrides))


def test_plain_sets_have_no_relative_tables(small_model):
    """dot_product (every other set): no tables, so existing checkpoints are unchanged."""
    model = build_model("transformer_tiny", "hidden_size=16,filter_size=24,num_heads=2")
    assert not [v for v in model.variables if "relative" in v.path]
    tables = [v for v in small_model.variables if "relative_positions" in v.path]
    assert len(tables) == 2 * 2 * 2  # keys and values, encoder and decoder self-attention, 2 layers
    assert {tuple(v.shape) for v in tables} == {(5, 8)}
    # T2T's --hparams on any set.
    model = build_model(
        "transformer_tiny",
        "hidden_size=16,filter_size=24,num_heads=2,num_hidden_layers=1,"
        "self_attention_type=dot_product_relative,max_relative_position=5",
    )
    tables = [v for v in model.variables if "relative_positions" in v.path]
    assert len(tables) == 4 and {tuple(v.shape) for v in tables} == {(11, 8)}


def test_t2t_reads_the_distance_only_for_relative_attention():
    """A T2T run with dot_product attention and a max_relative_position imports as it is
    (T2T never read it); relative attention with distance 0 is refused in one line."""
    from t2t_repro.t2t_import.errors import T2TImportError

    values = json.loads((REFERENCE / "t2t_1.15.7_relative_hparams.json").read_text())
    values = dict(values["transformer_relative_tiny"], self_attention_type="dot_product")
    sizes = {"input_vocab_size": 9, "target_vocab_size": 9, "target_space_id": 0}
    hp = map_hparams(values, "transformer_relative_tiny", sizes).hparams
    assert (hp.self_attention_type, hp.max_relative_position) == ("dot_product", 20)
    values.update(self_attention_type="dot_product_relative", max_relative_position=0)
    with pytest.raises(T2TImportError, match="max_relative_position=0"):
        map_hparams(values, "transformer_relative_tiny", sizes)


@pytest.mark.slow
def test_ctranslate2_decodes_the_imported_t2t_model_like_ours(t2t_model, searcher_of, tmp_path):
    """CTranslate2's relative_position attention is T2T's: its decodes of the imported T2T
    model are ours (alpha 0: CTranslate2's length penalty is another, docs/ctranslate2.md)."""
    from t2t_repro.decoding.ctranslate2_search import CTranslate2Searcher
    from t2t_repro.serving.ctranslate2_export import export_ctranslate2

    model = t2t_model
    export_ctranslate2(model, str(tmp_path / "ct2"), metadata=dict(problem="t2t_relative"))
    ref = reference("t2t_1.15.7_relative_decodes.npz")
    for beam in (1, 3):
        config = SearchConfig(beam_size=beam, alpha=0.0, extra_length=8)
        want_ids, want_scores = searcher_of(config)(ref["inputs"])
        searcher = CTranslate2Searcher(str(tmp_path / "ct2"), beam, 0.0, 8, intra_threads=1)
        ids, scores = searcher(ref["inputs"])
        got = [until_eos(row[0, 1:]) for row in ids]
        assert got == [until_eos(row[0, 1:]) for row in want_ids.numpy()]
        np.testing.assert_allclose(scores, want_scores.numpy()[:, :1], atol=1e-4)


def test_ctranslate2_refuses_relative_attention_with_a_position_signal():
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.serving import ExportError
    from t2t_repro.serving.ctranslate2_export import check_exportable

    hp = create_hparams(
        "transformer_relative_tiny", "pos=timing", input_vocab_size=9, target_vocab_size=9
    )
    with pytest.raises(ExportError) as refused:
        check_exportable(hp)
    message = str(refused.value)
    assert message.startswith("cannot export to CTranslate2: pos='timing'") and "\n" not in message


def test_training_pass_equals_inference_and_steps_move_the_tables():
    """The training pass (kept rows only, layers/pad_remover.py) is the inference pass at real
    target positions without dropout (bound as tests/test_pad_remover.py), and two Adam steps
    lower the loss through the relative tables."""
    import keras

    keras.utils.set_random_seed(2)
    no_dropout = "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0"
    model = build_model("transformer_relative_tiny", f"{SMALL},{no_dropout}", vocab_size=13)
    rng = np.random.default_rng(1)
    inputs = rng.integers(2, 13, size=[4, 7]).astype(np.int32)
    inputs[1, 4:], inputs[:, -1] = 0, 1
    targets = inputs[:, ::-1].copy()  # reversal: only the relative positions tell the order
    targets[1, 3:], targets[1, 2], targets[:, 0] = 0, 1, inputs[:, -2]
    features = {"inputs": tf.constant(inputs), "targets": tf.constant(targets)}
    real = targets != 0
    trained = model(features, training=True).numpy()
    inferred = model(features, training=False).numpy()
    np.testing.assert_allclose(trained[real], inferred[real], atol=1e-5, rtol=0)

    tables = model.encoder.layer_0.self_attention.sublayer.relative.keys_table
    before = tables.numpy().copy()
    optimizer = keras.optimizers.Adam(0.01)
    losses = []
    for step in range(3):
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            token = tf.keras.losses.sparse_categorical_crossentropy(targets, logits, True)
            loss = tf.reduce_sum(token * real) / real.sum()
        losses.append(float(loss))
        # The last loss is the two steps' outcome: a step after it (an eager Adam update,
        # ~0.3 CPU-s on AMD EPYC Zen 3) would only move the tables on from where the check
        # below sees them moved.
        if step < 2:
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    assert losses[-1] < losses[0]
    assert not np.array_equal(tables.numpy(), before)


def test_search_traced_as_the_saved_model_equals_t2t(t2t_model):
    """t2t-exporter traces the search with the input length known only at run time (one graph
    for every length, serving/exporter.py): there the decoder's cache buffer has a run-time
    length, from which each step's relative rows are computed. T2T's beam decodes still."""
    from t2t_repro.decoding.search import search

    ref = reference("t2t_1.15.7_relative_decodes.npz")
    config = SearchConfig(beam_size=3, alpha=float(ref["alpha"]), extra_length=8)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    def traced(ids):
        return search(t2t_model, config, ids, tf.shape(ids)[1] + config.extra_length)

    ids, scores = traced(tf.constant(ref["inputs"]))
    got = [until_eos(row[0, 1:]) for row in ids.numpy()]
    assert got == [until_eos(row) for row in ref["beam3_ids"]]
    np.testing.assert_allclose(scores.numpy()[:, 0], ref["beam3_scores"], atol=1e-3, rtol=1e-5)
