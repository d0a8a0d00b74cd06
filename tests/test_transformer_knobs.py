"""The Transformer with T2T's ``proximity_bias``, ``unidirectional_encoder`` and
``causal_decoder_self_attention=False`` against T2T 1.15.7 itself.

tests/data/t2t_reference/knobs holds T2T's EVAL logits (and encoder output, greedy ``infer``
ids and scores) of two existing tiny T2T train dirs (the packed reference's timing one and the
language model) with these hparams set over the saved ones, on a padded batch of 2 rows of
different lengths; made by tools/t2t_reference/knobs_reference.py (``make_t2t_reference.py
--only=knobs``), whose docstring cites what T2T does with each. What T2T itself shows here:

* ``proximity_bias`` alone on an unpacked seq2seq batch raises in T2T (the encoder reads its
  padding back from a bias the proximal term made [B, 1, L, L]: T2T issue #1262), EVAL and
  decode alike; it runs on packed features (``prox_packed``: the batch as packed rows of one
  example, which T2T computes as the unpacked batch at the real targets, ``base_packed``
  shows), with ``unidirectional_encoder`` (``prox_uni``, ``all``) and without inputs
  (``lm_prox``). Our unpacked batch is held to T2T's packed rows at the real targets.
* T2T's cached decoding ignores ``causal_decoder_self_attention``: its step bias is the lower
  triangle, so ``noncausal`` decodes as ``base`` and ``all`` as ``prox_uni``; ours must too.

Logits are compared everywhere, padding included, within the float32 bound of
``tests/float_bounds.py`` for the stacks' contraction chain (as tests/test_packed_model.py).
"""

import hashlib

import numpy as np
import pytest

from t2t_repro import registry
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.training.output_dir import saved_hparams
from tests.t2t_fixtures import REFERENCE, reference, shared_import
from tests.test_language_model import IdsText, until_eos
from tests.test_loss_rows import kept_rows_loss_rtol

REF = "knobs/t2t_1.15.7_knobs.npz"
REGENERATE = "run tools/t2t_reference/make_t2t_reference.py --only=knobs (README there)"
PROXIMITY = "proximity_bias=true"
UNIDIRECTIONAL = "unidirectional_encoder=true"
NONCAUSAL = "causal_decoder_self_attention=false"
# case: (train dir key, T2T --hparams string, packed features): knobs_reference.py's CASES.
CASES = {
    "base": ("seq2seq", "", False),
    "prox": ("seq2seq", PROXIMITY, False),
    "uni": ("seq2seq", UNIDIRECTIONAL, False),
    "noncausal": ("seq2seq", NONCAUSAL, False),
    "all": ("seq2seq", ",".join((PROXIMITY, UNIDIRECTIONAL, NONCAUSAL)), False),
    "prox_uni": ("seq2seq", ",".join((PROXIMITY, UNIDIRECTIONAL)), False),
    "base_packed": ("seq2seq", "", True),
    "prox_packed": ("seq2seq", PROXIMITY, True),
    "lm_base": ("lm", "", False),
    "lm_prox": ("lm", PROXIMITY, False),
}
# The knobs' cases (the controls' values serve the T2T-only test; T2T raises for prox alone).
WITH_LOGITS = ["uni", "noncausal", "all", "prox_uni", "prox_packed", "lm_prox"]
SEQ2SEQ_DECODES = ["uni", "noncausal", "all", "prox_uni"]


@pytest.fixture(scope="module")
def ref():
    return reference(REF)


@pytest.fixture(scope="module")
def imported(ref):
    """{train dir key: our import of it}, each the run's one import of it (read only)."""
    return {
        key: shared_import(REFERENCE / str(ref[f"{key}_train_dir"]))[0] for key in ("seq2seq", "lm")
    }


@pytest.fixture(scope="module")
def model_of(imported):
    """case -> our Transformer from its imported train dir with the case's hparams (cached)."""
    cache = {}

    def build(case):
        if case not in cache:
            key, overrides, _ = CASES[case]
            hp = saved_hparams(str(imported[key]))
            hp.parse(overrides)
            model = registry.model("transformer")(hp)
            restore_model(model, str(imported[key]))
            cache[case] = model
        return cache[case]

    return build


def features(ref, case) -> dict:
    """The case's batch as our model reads it (int32 [B, L]; packed: knobs_reference.py's
    rows of one example, ``<side>_segmentation`` 1 on the ids, positions 0, 1, ...)."""
    key, _, packed = CASES[case]
    sides = {"targets": ref["lm_targets"]} if key == "lm" else {"inputs": ref["inputs"]}
    if key == "seq2seq":
        sides["targets"] = ref["targets"]
    out = {side: ids.astype(np.int32) for side, ids in sides.items()}
    if packed:
        for side, ids in sides.items():
            seg = (ids != 0).astype(np.int32)
            out[f"{side}_segmentation"] = seg
            out[f"{side}_position"] = np.arange(ids.shape[1], dtype=np.int32) * seg
    return out


def tolerance(model, batch, want) -> float:
    """Two float32 evaluations of the same logits (T2T's graph, ours): the stacks' chain of
    contractions at these lengths (``tests/float_bounds.py``' first-order bound), relative to
    the largest T2T value compared (as tests/test_packed_model.py)."""
    target_length = batch["targets"].shape[1]
    source_length = batch["inputs"].shape[1] if "inputs" in batch else target_length
    rtol = kept_rows_loss_rtol(model.hparams, source_length, target_length)
    return rtol * float(np.abs(want).max())


def test_the_reference_is_of_the_train_dirs_and_these_cases(ref):
    """Each train dir's checkpoint is the one T2T ran (a dir made anew needs the reference
    made anew), the cases' hparams are these, and the batch has rows of different lengths."""
    for key in ("seq2seq", "lm"):
        train_dir = REFERENCE / str(ref[f"{key}_train_dir"])
        prefix = (train_dir / "checkpoint").read_text().split('"')[1]
        digest = hashlib.sha256()
        for path in sorted(train_dir.glob(f"{prefix}.*")):
            digest.update(path.read_bytes())
        assert digest.hexdigest() == str(ref[f"{key}_sha256"]), f"{train_dir}: {REGENERATE}"
    for case, (_, overrides, _) in CASES.items():
        assert str(ref[f"{case}_hparams"]) == overrides, case
    for name in ("inputs", "targets", "lm_targets"):
        lengths = (ref[name] != 0).sum(1)
        assert lengths[0] != lengths[1] and lengths.max() <= ref[name].shape[1], name
    assert ref["inputs"].shape[1] != ref["targets"].shape[1]


def test_what_t2t_does_with_the_knobs(ref):
    """T2T alone (no model of ours): proximity_bias raises on an unpacked seq2seq batch; its
    packed rows are its unpacked batch at the real targets; its cached decoding is causal
    whatever causal_decoder_self_attention; and each knob changes its logits."""
    for name in ("prox_error", "prox_greedy_error"):
        assert str(ref[name]).startswith("ValueError: Can not squeeze dim[2]"), ref[name]
    real = ref["targets"] != 0
    diff = np.abs(ref["base_packed_logits"] - ref["base_logits"])[real]
    assert diff.max() < 1e-5
    for case, control in (("noncausal", "base"), ("all", "prox_uni")):
        for name in ("greedy_ids", "greedy_scores"):
            np.testing.assert_array_equal(ref[f"{case}_{name}"], ref[f"{control}_{name}"])
    assert not np.array_equal(ref["prox_uni_greedy_ids"], ref["uni_greedy_ids"])
    for case, control in (
        ("uni", "base"),
        ("noncausal", "base"),
        ("all", "base"),
        ("prox_uni", "uni"),
        ("prox_packed", "base_packed"),
        ("lm_prox", "lm_base"),
    ):
        assert np.abs(ref[f"{case}_logits"] - ref[f"{control}_logits"]).max() > 0.1, case


@pytest.mark.parametrize("case", WITH_LOGITS)
def test_logits_equal_t2t(model_of, ref, case):
    """Our model with the case's hparams gives T2T's EVAL logits [B, Lt, V] everywhere, and
    for a seq2seq case T2T's encoder output, padding positions included (the pad remover's
    padding; with unidirectional_encoder T2T takes it from the encoder-decoder bias)."""
    model = model_of(case)
    batch = features(ref, case)
    want = ref[f"{case}_logits"]
    got = model(batch, training=False).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=tolerance(model, batch, want), rtol=0)
    if "inputs" in batch and not CASES[case][2]:
        want = ref[f"{case}_encoder_output"]
        got = model.encode(batch["inputs"])[0].numpy()
        np.testing.assert_allclose(got, want, atol=tolerance(model, batch, want), rtol=0)


def test_proximity_on_an_unpacked_batch_is_t2ts_on_packed_rows(model_of, ref):
    """T2T raises for proximity_bias on this unpacked batch; what it computes on the same
    examples as packed rows (``prox_packed``, equal to its unpacked batch at the real targets
    where both run: ``base_packed``) is what ours gives there."""
    model = model_of("prox")
    batch = features(ref, "prox")
    want = ref["prox_packed_logits"]
    real = ref["targets"] != 0
    got = model(batch, training=False).numpy()
    np.testing.assert_allclose(got[real], want[real], atol=tolerance(model, batch, want), rtol=0)


def compare_decodes(ids, scores, want_ids, want_scores, atol):
    """Our search output [B, 1, 1 + L] (start id first) against T2T's greedy [B, L'] and
    scores [B]: T2T's ids, those its loop emits past a row's EOS while another row is
    unfinished included, then zeros."""
    ids, scores = ids[:, 0, 1:], scores[:, 0]
    width = want_ids.shape[1]
    np.testing.assert_array_equal(ids[:, :width], want_ids)
    assert not ids[:, width:].any()
    np.testing.assert_allclose(scores, want_scores, atol=atol, rtol=0)


def score_tolerance(model, batch, ref, case, steps) -> float:
    """A greedy score sums ``steps`` log-probs, each off by at most twice the logits' bound
    (a log-softmax)."""
    return 2 * steps * tolerance(model, batch, ref[f"{case}_logits"])


@pytest.mark.parametrize(
    "case, use_cache",
    [(c, True) for c in SEQ2SEQ_DECODES] + [("prox_uni", False), ("noncausal", False)],
)
def test_greedy_decodes_equal_t2t(model_of, ref, case, use_cache):
    """T2T's greedy ``_fast_decode`` (decode_length = input length + extra_length): the same
    ids and scores from our search, cached or rerunning the decoder on the prefix; with
    causal_decoder_self_attention=False those of T2T's causal decode (cached only: our rerun
    of the whole decoder then attends forward within the prefix, and decodes otherwise)."""
    model = model_of(case)
    batch = features(ref, case)
    config = SearchConfig(
        beam_size=1, alpha=0.0, extra_length=int(ref["extra_length"]), use_cache=use_cache
    )
    ids, scores = Searcher(model, config)(batch["inputs"])
    want_ids = ref[f"{case}_greedy_ids"]
    atol = score_tolerance(model, batch, ref, case, want_ids.shape[1])
    compare_decodes(ids.numpy(), scores.numpy(), want_ids, ref[f"{case}_greedy_scores"], atol)


def test_language_model_prompt_decode_equals_t2t(model_of, ref):
    """T2T's greedy decode of a prompt given as ``inputs`` (forced partial targets, one
    prompt per batch as tests/test_language_model.py): the continuation and its score."""
    case = "lm_prox"
    model = model_of(case)
    dhp = decode_hparams(f"beam_size=1,extra_length={int(ref['extra_length'])}")
    (hyps,) = LineDecoder(model, IdsText(), IdsText(), dhp).decode_ids([ref["lm_prompt"].tolist()])
    want = ref[f"{case}_greedy_ids"][0]
    assert list(hyps[0].ids) == until_eos(want)
    atol = score_tolerance(model, features(ref, case), ref, case, len(want))
    np.testing.assert_allclose(hyps[0].score, ref[f"{case}_greedy_scores"][0], atol=atol, rtol=0)
