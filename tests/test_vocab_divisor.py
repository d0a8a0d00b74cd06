"""T2T's ``vocab_divisor``: every vocabulary size rounded up to a multiple of it, so the
embedding and softmax rows (and their shards), the logits' width, the loss's label smoothing
and every search are over the rounded size; a padded id a search picks has no text (T2T's
subword encoder's ""; its token encoder's ``ID_<id>``). And ``symbol_modality_skip_top``,
which T2T 1.15.7 does not have.

tests/data/t2t_reference/vocab_divisor holds a tiny T2T 1.15.7 train dir with
``vocab_divisor=8`` (13 ids, unshared matrices of 16 rows in 3 shards) and what T2T computes
with it: EVAL logits, the EVAL loss (T2T's EVAL mode has no label smoothing) and the training
loss (smoothing 0.1, every dropout 0), greedy and all-beams decodes (the greedy one picks
padded ids), and what T2T does with ``symbol_modality_skip_top``; made by
tools/t2t_reference/make_t2t_vocab_divisor_reference.py (README there).
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry, t2t_hparams
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.decoding.postprocess import decode_text, strip_after_eos
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib import checks
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.hparams_lib.sizes import logits_width, padded_vocab_size
from t2t_repro.losses import padded_cross_entropy, padded_cross_entropy_of_hidden
from t2t_repro.t2t_import import import_t2t_dir
from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder
from t2t_repro.text_encoding.token_encoder import TokenTextEncoder
from tests.t2t_fixtures import REFERENCE, load_imported, reference
from tests.test_language_model import until_eos
from tests.test_transformer_knobs import tolerance

TRAIN_DIR = REFERENCE / "vocab_divisor" / "t2t_train_dir"
REF = "vocab_divisor/t2t_1.15.7_vocab_divisor.npz"
SUBTOKENS = ["<pad>", "<EOS>", *(f"{c}_" for c in "abcdefghijk")]  # 13 ids, as T2T's problem


class StrictIds:
    """The 13 ids as text, failing past them (T2T's ByteTextEncoder and ClassLabelEncoder fail
    on an id past their vocabulary)."""

    vocab_size = 13

    def decode(self, ids, real: bool = False) -> str:
        return " ".join(SUBTOKENS[i] for i in ids if not real or i < 13)


@pytest.fixture(scope="module")
def ref():
    return reference(REF)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """T2T's train dir imported with a 13-id subword vocabulary (the problem's own size)."""
    root = tmp_path_factory.mktemp("vocab_divisor")
    vocab = root / "vocab.tiny.subwords"
    vocab.write_text("".join(f"'{s}'\n" for s in SUBTOKENS))
    notes = []
    result = import_t2t_dir(str(TRAIN_DIR), str(root / "train"), vocab=str(vocab), log=notes.append)
    return result, load_imported(root / "train"), SubwordTextEncoder(str(vocab))


def test_import_keeps_the_problems_size_and_t2ts_padded_rows(imported):
    result, model, encoder = imported
    hp = result.imported.hparams
    assert (hp.vocab_divisor, hp.input_vocab_size, hp.target_vocab_size) == (8, 13, 13)
    assert encoder.vocab_size == 13 and logits_width(hp) == 16
    # three matrices of 16 rows; T2T's checkpoint holds each in shards of 6, 5, 5
    shapes = tf.train.load_checkpoint(str(TRAIN_DIR)).get_variable_to_shape_map()
    for layer in (model.input_embedding, model.target_embedding, model.softmax):
        assert layer.embeddings.shape == (16, 16), layer.name
        scope = f"transformer/symbol_modality_16_16/{layer.name}/weights_"
        assert [shapes[f"{scope}{i}"][0] for i in range(3)] == [6, 5, 5]
    assert result.with_optimizer  # T2T's Adam moments of the 16 rows too


def test_logits_and_losses_equal_t2ts(imported, ref):
    """T2T's logits of the 16 ids; its loss smooths 0.1 over all 16 (``padded_cross_entropy``
    reads the logits' width): the loss of a log-softmax is within 3x the logits' bound
    (log Z and each logit move by at most that; the smoothing weights sum to <= 2)."""
    _, model, _ = imported
    features = {"inputs": ref["inputs"], "targets": ref["targets"]}
    logits = model(features, training=False)
    assert logits.shape == (*ref["targets"].shape, 16)
    atol = tolerance(model, features, ref["logits"])
    np.testing.assert_allclose(logits.numpy(), ref["logits"], atol=atol, rtol=0)
    targets = tf.constant(ref["targets"])
    hidden = model.decoder_output(features, training=False)
    for smoothing, want in ((0.0, ref["eval_loss"]), (float(ref["label_smoothing"]), None)):
        want = ref["train_loss"] if want is None else want
        total, count = padded_cross_entropy(logits, targets, smoothing)
        np.testing.assert_allclose(float(total / count), want, atol=3 * atol, rtol=0)
        # the trainer's path: the projection and loss at the real targets only
        total, count = padded_cross_entropy_of_hidden(
            hidden, model.output_logits, targets, smoothing
        )
        np.testing.assert_allclose(float(total / count), want, atol=3 * atol, rtol=0)


def test_greedy_and_beam_decodes_equal_t2ts_over_the_padded_ids(imported, ref):
    """T2T's greedy decode picks padded ids (>= 13); each score is a log-softmax over all 16
    ids, as are the beams' (T2T's all-beams search: one finished, two placeholders)."""
    _, model, encoder = imported
    batch = {"inputs": ref["inputs"], "targets": ref["targets"]}
    extra = int(ref["extra_length"])
    want = ref["greedy_ids"]
    assert (want >= 13).any()
    atol = 2 * want.shape[1] * tolerance(model, batch, ref["logits"])
    # t2t-decoder's path: the text of a row leaves its padded ids out (a vocabulary that
    # fails on them, as T2T's ByteTextEncoder and ClassLabelEncoder do, included)
    decoder = LineDecoder(
        model, encoder, StrictIds(), decode_hparams(f"beam_size=1,extra_length={extra}")
    )
    rows = [[int(i) for i in row if i] for row in ref["inputs"]]
    for hyps, row, score in zip(decoder.decode_ids(rows), want, ref["greedy_scores"], strict=True):
        ids = strip_after_eos([0, *row])
        assert hyps[0].ids == tuple(ids) and hyps[0].text == StrictIds().decode(ids, real=True)
        np.testing.assert_allclose(hyps[0].score, score, atol=atol, rtol=0)
    beam, alpha = int(ref["beam_size"]), float(ref["alpha"])
    config = SearchConfig(beam_size=beam, alpha=alpha, extra_length=extra, return_beams=True)
    ids, scores = Searcher(model, config)(ref["inputs"])
    got = [[until_eos(h) for h in row] for row in ids.numpy()[:, :, 1:]]
    assert got == [[until_eos(h) for h in row] for row in ref["beams_ids"]]
    np.testing.assert_allclose(scores.numpy(), ref["beams_scores"], atol=atol, rtol=0)
    # T2T's SubwordTextEncoder gives "" for a padded id, and so does ours
    assert decode_text(encoder, list(want[0])) == encoder.decode([i for i in want[0] if i < 13])


def test_default_is_unchanged_and_t2ts_sharing_compares_rounded_sizes():
    """vocab_divisor=1 (T2T's default, and what an hparams.json without it means) keeps the
    problem's sizes; with 8, vocabularies of 11 and 13 both round to 16, and T2T's
    T2TModel.__init__ then keeps the shared embedding (it compares the rounded sizes)."""
    hp = create_hparams("transformer_tiny", input_vocab_size=11, target_vocab_size=13)
    assert hp.vocab_divisor == 1 and logits_width(hp) == 13
    assert (
        padded_vocab_size(13, HParams(hidden_size=8)) == 13 and padded_vocab_size(None, hp) is None
    )
    model = registry.model("transformer")(hp)
    assert (model.input_embedding.vocab_size, model.softmax.vocab_size) == (11, 13)
    assert model.input_embedding is not model.softmax
    model = registry.model("transformer")(hp.copy().parse("vocab_divisor=8"))
    assert model.input_embedding is model.softmax and model.softmax.vocab_size == 16
    classifier = create_hparams(
        "transformer_tiny", "vocab_divisor=4", input_vocab_size=13, target_vocab_size=3
    )
    classifier.add_hparam("class_label_target", True)
    model = registry.model("transformer_encoder")(classifier)
    assert (model.input_embedding.vocab_size, model.class_label.units) == (16, 4)


def test_padded_ids_have_no_text_as_in_t2ts_subword_encoder(tmp_path):
    """T2T's SubwordTextEncoder gives "" and TokenTextEncoder ``ID_<id>`` for an id past the
    vocabulary; its ByteTextEncoder and ClassLabelEncoder fail (struct.error, IndexError): here
    such an id has no text there either, so no decode (nor a training run's dev decodes) stops
    on it. The SavedModel export's token tables decode the padded ids the same way."""
    from t2t_repro.serving.exporter import padded_tokens
    from t2t_repro.t2t_compat.text_encoder import ClassLabelEncoder

    tokens = tmp_path / "tokens.txt"
    tokens.write_text("<pad>\n<EOS>\nx\n")
    encoder = TokenTextEncoder(str(tokens))
    size = encoder.vocab_size
    assert decode_text(encoder, [encoder.token_id("x"), size]) == f"x ID_{size}"
    assert decode_text(ByteTextEncoder(), [70, 260, 71]) == "DE"
    labels = ClassLabelEncoder(["a", "b"])
    assert (decode_text(labels, [1]), decode_text(labels, [3])) == ("b", "")
    with pytest.raises(ValueError):  # a negative id is no padding: the error stays
        decode_text(ByteTextEncoder(), [-1, 3])
    assert padded_tokens(("<pad>", "<EOS>", "x"), 5, False)[3:] == ["ID_3", "ID_4"]
    assert padded_tokens(("a", "b"), 4, True) == ["a", "b", "", ""]


def test_the_table_honours_it_and_t2t_1_15_has_no_skip_top(ref):
    """vocab_divisor is honoured (0 refused: T2T divides by it); symbol_modality_skip_top is
    not a T2T 1.15.7 hparam: its --hparams refuses the name and a set that adds it gets the
    same logits (T2T's own, recorded). It is refused here in one line at True (T2T before
    1.15 skipped the softmax with it, and its train dirs' hparams.json hold it)."""
    assert t2t_hparams.TABLE["vocab_divisor"].meaning == t2t_hparams.HONOURED
    assert t2t_hparams.refusal("vocab_divisor", 8) is None
    hp = create_hparams("transformer_tiny", "vocab_divisor=0", input_vocab_size=13)
    with pytest.raises(HParamsError, match="vocab_divisor=0 must be positive"):
        checks.validate(hp)
    error = str(ref["skip_top_error"])
    assert error.startswith("ValueError") and "symbol_modality_skip_top" in error
    np.testing.assert_array_equal(ref["skip_top_logits"], ref["logits"])
    message = t2t_hparams.refusal("symbol_modality_skip_top", True)
    assert "T2T 1.15 has no such hparam" in message and "\n" not in message


def test_scheduled_sampling_is_refused_with_it_as_t2t_asserts():
    """T2T's maybe_scheduled_sampling asserts vocab_divisor == 1 (utils/t2t_model.py)."""
    from t2t_repro.training.loop.scheduled_sampling import sampling_for

    hp = create_hparams(
        "transformer_tiny",
        "scheduled_sampling_prob=1,vocab_divisor=8",
        input_vocab_size=13,
        target_vocab_size=13,
    )
    model = registry.model("transformer")(hp)
    with pytest.raises(ValueError, match="T2T asserts vocab_divisor == 1") as e:
        sampling_for(model, hp)
    assert "\n" not in str(e.value)
    assert sampling_for(model, hp, training=False) is not None  # T2T asserts in training only
    assert sampling_for(model, hp.copy().parse("vocab_divisor=1")) is not None


def test_the_tree_constraint_takes_a_padded_id_as_pad():
    """A beam may keep a masked candidate (-1e7): with vocab_divisor one of the padded ids,
    which the parsers' tree constraint has no row for. It changes nothing, as PAD."""
    from t2t_repro.parsing.tree_constraint import TreeConstraint
    from tests.test_tree_constraint import ENC, SENTENCES

    constraint = TreeConstraint(ENC.tokens)
    words = SENTENCES[0]
    classes = constraint.word_classes(words, len(words) + 1)[None]
    state = constraint.initial_state(classes, np.array([len(words)], np.int32))
    state = constraint.update(state, np.array([5], np.int32))  # a tree token first
    padded = constraint.update(state, np.array([ENC.vocab_size + 3], np.int32))
    same = constraint.update(state, np.array([0], np.int32))
    for name in state:
        np.testing.assert_array_equal(padded[name], same[name], err_msg=name)
