"""Tree-constrained search: the mask on hand-made states, and real decodes of an untrained model."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.beam_search import beam_search
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.parsing.linearize import (
    PTB_PHRASE_LABELS,
    PTB_POS_TAGS,
    PUNCTUATION_TAGS,
    delinearize_with_repairs,
    target_inventory,
)
from t2t_repro.parsing.tree_constraint import TreeConstraint
from t2t_repro.text_encoding.token_encoder import TokenTextEncoder
from tests.float_bounds import gamma
from tests.model_utils import build_model
from tests.tools import NO_ENCODER_LAYER

# The decodes check trees, the constraint's mask and agreement between paths, not T2T's
# numbers. Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")

ENC = TokenTextEncoder(tokens=target_inventory(["S NP DT NN /NP ADVP|PRT /ADVP|PRT /S"]))
CON = TreeConstraint(ENC.tokens)
PUNCT = {",", ".", ":", "``", "''"}


def allowed_after(prefix: str, words: list[str], steps_left: int = 100) -> set[str]:
    """The tokens allowed after ``prefix`` for a sentence of ``words``."""
    state = CON.initial_state(
        tf.constant([CON.word_classes(words, len(words) + 1)]), tf.constant([len(words)])
    )
    for token in prefix.split():
        state = CON.update(state, tf.constant([ENC.token_id(token)]))
    mask = CON.allowed(state, tf.constant(steps_left)).numpy()[0]
    return {ENC.tokens[i] for i in np.flatnonzero(mask)}


OPENERS = set(PTB_PHRASE_LABELS) | {"ADVP|PRT"}
WORD_TAGS = set(PTB_POS_TAGS) - PUNCT - {"-NONE-"}


def test_start_allows_only_openers():
    allowed = allowed_after("", ["The", "cat", "sat", "."])
    assert OPENERS <= allowed and not allowed & (set(PTB_POS_TAGS) | {"<EOS>", "/S", "/NP"})
    assert all(t in ENC.tokens and not t.startswith("/") and t not in PTB_POS_TAGS for t in allowed)


def test_inside_a_constituent():
    words = ["The", "cat", "sat", "."]
    assert allowed_after("S NP", words) == OPENERS | WORD_TAGS  # empty NP: no closer yet
    # Only the innermost constituent's closer; ordinary words get no punctuation tag.
    assert allowed_after("S NP DT", words) == OPENERS | WORD_TAGS | {"/NP"}
    # The 4th word is '.': its slot may only be '.'; the root may not close before it.
    assert allowed_after("S NP DT NN /NP VP VBD /VP", words) == OPENERS | {"."}
    assert allowed_after("S NP DT NN /NP VP VBD", words) == OPENERS | {".", "/VP"}
    # Every word slotted: only closers, innermost first, then EOS only.
    assert allowed_after("S NP DT NN /NP VP VBD /VP .", words) == {"/S"}
    assert allowed_after("S NP DT NN /NP VP VBD /VP . /S", words) == {"<EOS>"}


def test_runs_of_openers_are_capped_as_in_the_treebank():
    words = ["a", "b", "c"]
    assert allowed_after("S NN NP NP", words) == OPENERS | WORD_TAGS
    assert allowed_after("S NN NP NP NP", words) == OPENERS - {"NP"} | WORD_TAGS  # 3 NPs in a row
    assert allowed_after("S NN NP NP VP", words) == OPENERS | WORD_TAGS
    assert allowed_after("S NP ADJP VP", words) == WORD_TAGS  # 4 openers in a row
    assert allowed_after("S NP ADJP VP NN NP", words) == OPENERS | WORD_TAGS


def test_apostrophe_is_a_quote_only_after_a_single_opening_quote():
    assert allowed_after("NP NNS", ["dogs", "'"]) == OPENERS | WORD_TAGS
    assert allowed_after("NP `` NN", ["`", "dogs", "'"]) == OPENERS | {"''"}
    assert allowed_after("NP `` NN '' NN", ["`", "dogs", "'", "cats", "'"]) == OPENERS | WORD_TAGS


def test_length_limit_reserves_the_steps_to_close():
    words = ["The", "cat", "sat", "."]
    # 3 words left + 2 open constituents + EOS: with 6 steps left no new constituent fits.
    assert allowed_after("S NP", words, steps_left=6) == WORD_TAGS
    assert allowed_after("S NP DT", words, steps_left=5) == WORD_TAGS | {"/NP"}
    assert allowed_after("S NP DT", words, steps_left=7) == OPENERS | WORD_TAGS | {"/NP"}
    # 1 word left, 2 open, EOS: 3 steps fit a tag or a closer (each then leaves 3 to do).
    assert allowed_after("S NP DT NN", words[:3], steps_left=3) == WORD_TAGS | {"/NP"}
    # A limit shorter than the sentence: nothing fits, so the hypothesis may only end.
    assert allowed_after("", words, steps_left=2) == {"<EOS>"}


def test_a_full_gold_sequence_is_always_allowed():
    words = "Yes , he said '' .".split()
    target = "S INTJ UH /INTJ , NP PRP /NP VP VBD /VP '' . /S"
    for k, token in enumerate(target.split() + ["<EOS>"]):
        assert token in allowed_after(" ".join(target.split()[:k]), words)


SENTENCES = [
    ["The", "cat", "sat", "."],
    ["Yes", ",", "he", "said", "''", "--", "dogs", "'"],
    ["a"],
    ["``", "Oh", "!", "''", "`", "b", "'"],
]


@functools.cache
def _model():
    """One model for every decode below (a search only reads it)."""
    keras.utils.set_random_seed(3)
    return build_model(  # one decoder layer: the constraint acts on any model's scores alike
        "transformer_tiny",
        f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER}",
        vocab_size=30,
        target_vocab_size=ENC.vocab_size,
    )


@pytest.fixture(scope="module", autouse=True)
def _release_model():
    yield
    _model.cache_clear()  # not held past this module (tests/conftest.py releases Keras state)


@functools.cache
def _decode(beam_size: int, use_xla: bool, renormalize: bool = False):
    model = _model()
    constraint = TreeConstraint(ENC.tokens, renormalize=renormalize)
    length = 9
    inputs = np.zeros([len(SENTENCES), length], np.int32)
    for row, words in enumerate(SENTENCES):
        inputs[row, : len(words)] = np.arange(5, 5 + len(words))
        inputs[row, len(words)] = 1
    classes = np.stack([constraint.word_classes(w, length) for w in SENTENCES])
    searcher = Searcher(model, SearchConfig(beam_size, 0.6, 4, use_xla), constraint)
    ids, scores = searcher(inputs, classes, np.array([len(w) for w in SENTENCES], np.int32))
    return ids.numpy(), scores.numpy()


def _check_valid(ids_row, words):
    row = ids_row[1:].tolist()
    assert 1 in row, "every constrained hypothesis ends with EOS"
    target = ENC.decode(row[: row.index(1)])
    tree, repairs = delinearize_with_repairs(words, target)
    assert repairs.total() == 0, (target, repairs)
    assert tree.words() == words
    for word, tag in zip(words, tree.tags(), strict=True):
        if word in PUNCTUATION_TAGS:
            assert tag == PUNCTUATION_TAGS[word], (word, tag)
        elif word == "'" and "`" in words:
            assert tag == "''"
        else:
            assert tag not in PUNCT, (word, tag)


@pytest.mark.slow
@pytest.mark.parametrize("beam_size", [1, 3])
def test_every_decode_is_a_tree_over_the_words_and_xla_agrees(beam_size):
    ids, scores = _decode(beam_size, use_xla=False)
    ids_xla, scores_xla = _decode(beam_size, use_xla=True)
    for row, words in enumerate(SENTENCES):
        for beam in range(ids.shape[1]):
            _check_valid(ids[row, beam], words)
    np.testing.assert_array_equal(ids, ids_xla)
    np.testing.assert_allclose(scores, scores_xla, atol=1e-4)


@pytest.mark.slow
def test_renormalized_scores_differ_but_stay_valid():
    ids, scores = _decode(3, use_xla=False, renormalize=True)
    plain_ids, plain_scores = _decode(3, use_xla=False)
    for row, words in enumerate(SENTENCES):
        _check_valid(ids[row, 0], words)
    assert (scores > plain_scores).all()  # forced steps cost nothing once renormalised


@pytest.mark.parametrize("use_xla", [False, True])
def test_hook_that_allows_everything_changes_nothing(use_xla):
    """The hooked path (constrain_fn) with no mask gives the same ids, and the same scores to
    float32 rounding: it takes the log-softmax of [N, V] rows where the plain path takes it of
    [B, beam, V] (another shape, so possibly another kernel and summation order)."""
    rng = np.random.default_rng(0)
    table = tf.constant(rng.normal(size=[6, 9, 9]).astype(np.float32) * 3)

    def step(ids, i, states):  # logits from the step and the previous token
        return tf.gather(tf.gather(table, i), tf.gather(ids, i, axis=1)), states

    def run(constrain_fn):
        # No autograph, as the searches trace (decoding/search.py): their loops are explicit
        # tf.while_loops; autograph's rewrite of beam_search (once a process) made the first
        # of the two tests 2.1 core-s, not 0.25 (AMD EPYC Zen 3).
        fn = tf.function(
            lambda: beam_search(
                step,
                tf.zeros([2], tf.int32),
                3,
                6,
                9,
                0.6,
                states={"x": tf.zeros([2, 1])},
                constrain_fn=constrain_fn,
            ),
            jit_compile=use_xla,
            autograph=False,
        )
        return [t.numpy() for t in fn()]

    plain = run(None)
    hooked = run(lambda log_probs, ids, i, states: (log_probs, states))
    np.testing.assert_array_equal(plain[0], hooked[0])
    # Each of the 6 steps adds a log-probability: a logit minus a 9-term log-sum-exp, each
    # path within gamma(V + 1) of it, relative to (|log Z| + |logit|) <= 2 max|logit| + log V;
    # then 6 additions (the length penalty, >= 1, only divides).
    steps, vocab = 6, 9
    step_bound = 2 * gamma(vocab + 1) * (2 * np.abs(table.numpy()).max() + np.log(vocab))
    bound = steps * step_bound + 2 * gamma(steps) * np.abs(plain[1].astype(np.float64))
    assert np.all(np.abs(plain[1].astype(np.float64) - hooked[1]) <= bound)


def test_word_classes_in_the_graph_match_the_host():
    sentences = [
        ["'", "`", "a", "'", "'", "b"],
        ["`", "`", "x", "'", "y", "'", "'"],
        [",", "dogs", "'", "--", "``", "ok", "''", "."],
        ["z"],
    ]
    width = max(map(len, sentences))
    words = tf.constant([s + [""] * (width - len(s)) for s in sentences])
    graph = CON.graph_word_classes(words, CON.word_class_table()).numpy()
    host = np.stack([CON.word_classes(s, width) for s in sentences])
    np.testing.assert_array_equal(graph, host)
    assert host[0][3] == CON.word_classes(["''"], 1)[0] and host[0][4] == 0  # one ` closes once


def test_constraint_needs_a_token_target_vocabulary():
    from t2t_repro.decoding.line_decoder import decode_hparams
    from t2t_repro.parsing.tree_constraint import tree_constraint_for
    from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder

    assert tree_constraint_for(ENC, decode_hparams("", {"tree_constraint": False})) is None
    assert (
        tree_constraint_for(ENC, decode_hparams("", {"tree_constraint": True})).vocab_size
        == ENC.vocab_size
    )
    with pytest.raises(ValueError, match="one id per token.*tree_constraint=False"):
        tree_constraint_for(SubwordTextEncoder(), decode_hparams("", {"tree_constraint": True}))
    with pytest.raises(ValueError, match="lacks"):
        TreeConstraint(["<pad>", "<EOS>", "<UNK>", "S", "/S"])
