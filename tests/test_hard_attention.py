"""T2T's hard attention (``hard_attention_k``, ``gumbel_noise_weight``):
``layers/hard_attention.py``.

T2T 1.15.7's own outputs with it are in tests/data/t2t_reference/hard_attention (made by
tools/t2t_reference/hard_attention_reference.py, ``make_t2t_reference.py --only=hard``): EVAL
logits of tiny T2T train dirs and greedy decodes, and with Gumbel noise whose uniform draws
are replaced by a deterministic pattern (the reference's docstring gives it) that the test
gives ours too.
"""

import hashlib

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.layers.attention import MultiHeadAttention
from t2t_repro.layers.hard_attention import gumbel_noise, harden, top_kth_iterative
from t2t_repro.training.output_dir import saved_hparams
from tests.float_bounds import UNIT_ROUNDOFF
from tests.t2t_fixtures import REFERENCE, reference, shared_import
from tests.test_language_model import IdsText, until_eos
from tests.test_transformer_knobs import compare_decodes, tolerance

REF = "hard_attention/t2t_1.15.7_hard_attention.npz"
REGENERATE = "run tools/t2t_reference/make_t2t_reference.py --only=hard (README there)"
# case: the train dir it is of (hard_attention_reference.py's cases)
LOGIT_CASES = {
    **{c: "seq2seq" for c in ("k1", "k2", "k3", "k4", "k9", "gumbel_k2")},
    **{c: "lm" for c in ("lm_k1", "lm_k2", "lm_k3")},
    **{c: "relative" for c in ("relative_k2", "relative_k3")},
}


def test_the_kth_largest_counts_ties_once_as_t2ts_iteration():
    """T2T's ``top_kth_iterative`` sets every element equal to the row's maximum to 0 at once,
    k - 1 times, then takes the maximum: a tie is one value, and a row with fewer than k
    positive values gives 0. Written out here with Python's sets."""
    rows = np.array(
        [[0.1, 0.5, 0.2, 0.2], [0.5, 0.5, 0.3, 0.1], [0.7, 0.0, 0.3, 0.0], [0.0, 0.0, 1.0, 0.0]],
        np.float32,
    )
    for k in (1, 2, 3):
        want = []
        for row in rows:
            distinct = sorted({float(v) for v in row if v > 0}, reverse=True)
            want.append(distinct[k - 1] if len(distinct) >= k else 0.0)
        got = top_kth_iterative(tf.constant(rows), k).numpy()[:, 0]
        np.testing.assert_array_equal(got, np.array(want, np.float32), err_msg=f"k={k}")


def test_hardened_weights_keep_the_top_k_renormalised_and_leave_absent_slots_out():
    weights = tf.constant([[0.1, 0.5, 0.2, 0.2], [0.4, 0.3, 0.2, 0.1]])
    got = harden(weights, 2).numpy()
    # row 0: the k-th largest is 0.2 (the tie counted once): 0.5 - 0.2 is all that is left
    np.testing.assert_allclose(got[0], [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(got[1], [0.1 / 0.1, 0.0, 0.0, 0.0], rtol=1e-6)
    # a cache slot not yet written is no key: it neither counts nor gets weight
    absent = tf.constant([[False, False, True, True]])
    got = harden(tf.constant([[0.3, 0.7, 0.0, 0.0]]), 3, absent=absent).numpy()
    np.testing.assert_allclose(got, [[0.3, 0.7, 0.0, 0.0]], rtol=1e-6)
    noisy = harden(tf.constant([[0.3, 0.7, 0.0, 0.0]]), 3, tf.constant([[-0.5] * 4]), absent)
    np.testing.assert_allclose(noisy, [[0.0, 1.0, 0.0, 0.0]], rtol=1e-6)  # -0.2, 0.2 then
    assert np.all(harden(tf.zeros([1, 3]), 1).numpy() == 0)  # an all-zero row stays finite


def test_hardened_weights_are_t2ts_own_function_s():
    """T2T's ``harden_attention_weights`` of softmax weights with ties and masked keys, for
    k = 1..7 (above the keys too), and with Gumbel noise of the reference's draws."""
    ref = reference(REF)
    weights = tf.constant(ref["harden_weights"])
    for k, want in zip(ref["harden_k"], ref["harden_out"], strict=True):
        got = harden(weights, int(k)).numpy()
        assert np.all(np.abs(got - want) <= bound(weights, 0.0, int(k))), f"k={k}"
    noise = gumbel_noise(pattern(weights.shape), float(ref["harden_gumbel_weight"]))
    for k, want in zip(ref["harden_gumbel_k"], ref["harden_gumbel_out"], strict=True):
        got = harden(weights, int(k), noise).numpy()
        assert np.all(np.abs(got - want) <= bound(weights, noise, int(k))), f"noise, k={k}"


def bound(weights, noise, k: int) -> np.ndarray:
    """Two float32 evaluations of T2T's hardening of the same softmax weights: the noise (a
    log of a log) and the subtraction are off by a few ulps of the row's largest term, the
    row's sum by its length more; relative to that sum (at least 1e-6) once divided."""
    noisy = np.asarray(weights + noise)
    kept = np.maximum(noisy - np.asarray(top_kth_iterative(noisy, k)), 0)
    total = np.maximum(kept.sum(-1, keepdims=True), 1e-6)
    largest = np.abs(noisy).max(-1, keepdims=True)
    return (8 + noisy.shape[-1]) * UNIT_ROUNDOFF * largest * (1 + 1 / total)


# -- T2T 1.15.7's models --------------------------------------------------------------------


def pattern(shape) -> tf.Tensor:
    """The reference's uniform draws: u[b, h, i, j] = ((3b + 5h + 7i + 11j) % 10 + 0.5) / 10."""
    b, h, i, j = np.meshgrid(*(np.arange(int(n)) for n in shape), indexing="ij")
    return tf.constant(((3 * b + 5 * h + 7 * i + 11 * j) % 10 + 0.5) / 10, tf.float32)


@pytest.fixture(scope="module")
def ref():
    return reference(REF)


@pytest.fixture(scope="module")
def imported(ref):
    """{train dir key: our import of it}, each checked to be the checkpoint T2T read."""
    out = {}
    for key in ("seq2seq", "lm", "relative"):
        source = REFERENCE / str(ref[f"{key}_train_dir"])
        prefix = (source / "checkpoint").read_text().split('"')[1]
        digest = hashlib.sha256()
        for path in sorted(source.glob(f"{prefix}.*")):
            digest.update(path.read_bytes())
        assert digest.hexdigest() == str(ref[f"{key}_sha256"]), f"{source}: {REGENERATE}"
        out[key], _ = shared_import(source)  # the run's one import of it (read only)
    return out


@pytest.fixture(scope="module")
def model_of(imported, ref):
    """(case, train dir key) -> our Transformer of that import with the case's hparams, made
    once for the module: the decode tests read the logits tests' models (the tests only read
    them; the Gumbel draws are the class's, patched per test)."""
    cache = {}

    def build(case: str, key: str):
        if case not in cache:
            hp = saved_hparams(str(imported[key])).parse(str(ref[f"{case}_hparams"]))
            cache[case] = registry.model("transformer")(hp)
            restore_model(cache[case], str(imported[key]))
        return cache[case]

    return build


def features(ref, key: str) -> dict:
    if key == "lm":
        return {"targets": ref["lm_targets"].astype(np.int32)}
    return {side: ref[side].astype(np.int32) for side in ("inputs", "targets")}


@pytest.mark.parametrize("case", LOGIT_CASES)
def test_logits_equal_t2ts(model_of, ref, case, monkeypatch):
    """T2T's EVAL logits (and encoder output) with hard attention everywhere, padding
    included: k = 1 (no key left: T2T's attention outputs 0), 2 (the largest only), 3, and k
    above the number of keys (the softmax unchanged); with Gumbel noise of the reference's
    draws (added in EVAL too, as T2T's)."""
    key = LOGIT_CASES[case]
    monkeypatch.setattr(MultiHeadAttention, "_uniform", lambda self, shape, seed: pattern(shape))
    model = model_of(case, key)
    batch = features(ref, key)
    want = ref[f"{case}_logits"]
    got = model(batch, training=False).numpy()
    atol = tolerance(model, batch, want)
    np.testing.assert_allclose(got, want, atol=atol, rtol=0)
    if key != "lm":
        want = ref[f"{case}_encoder_output"]
        got = model.encode(batch["inputs"])[0].numpy()
        np.testing.assert_allclose(got, want, atol=tolerance(model, batch, want), rtol=0)


def test_greedy_decode_equals_t2ts(model_of, ref):
    """T2T's cached greedy decode: ids and scores (the reference also holds beam and relative
    decodes; the cached step's handling of its buffer is checked below, with noise)."""
    model = model_of("k2", "seq2seq")
    batch = features(ref, "seq2seq")
    config = SearchConfig(beam_size=1, alpha=0.0, extra_length=int(ref["extra_length"]))
    ids, scores = Searcher(model, config)(batch["inputs"])
    want_ids = ref["k2_greedy_ids"]
    atol = 2 * want_ids.shape[1] * tolerance(model, batch, ref["k2_logits"])
    compare_decodes(ids.numpy(), scores.numpy(), want_ids, ref["k2_greedy_scores"], atol)


def test_language_model_prompt_decode_equals_t2ts(model_of, ref):
    model = model_of("lm_k2", "lm")
    dhp = decode_hparams(f"beam_size=1,extra_length={int(ref['extra_length'])}")
    (hyps,) = LineDecoder(model, IdsText(), IdsText(), dhp).decode_ids([ref["lm_prompt"].tolist()])
    want = ref["lm_k2_greedy_ids"][0]
    assert list(hyps[0].ids) == until_eos(want)
    atol = 2 * len(want) * tolerance(model, features(ref, "lm"), ref["lm_k2_logits"])
    np.testing.assert_allclose(hyps[0].score, ref["lm_k2_greedy_scores"][0], atol=atol, rtol=0)


def test_a_cached_step_hardens_over_the_keys_written_so_far():
    """With Gumbel noise (deterministic draws of each key's own value) the buffer's unwritten
    slots would enter the top k: a cached step must give what T2T's growing cache gives, the
    same attention over the prefix alone (the last query of a causal pass over it)."""
    key_noise = lambda self, shape, seed: pattern([shape[0], shape[1], 1, shape[3]])  # noqa: E731
    layer = MultiHeadAttention(2, 8, 8, 8, hard_attention_k=2, gumbel_noise_weight=1.0)
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=[2, 5, 8]), tf.float32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MultiHeadAttention, "_uniform", key_noise)
        cache = layer.empty_cache(2, 5, tf.float32)
        for t in range(5):
            step, cache = layer(x[:, t : t + 1], cache=cache, cache_update_index=t)
            causal = tf.constant(np.triu(np.full([t + 1, t + 1], -1e9, np.float32), 1))
            prefix = layer(x[:, : t + 1], bias=causal[None, None])[:, -1:]
            np.testing.assert_allclose(step, prefix, atol=1e-5, rtol=0, err_msg=f"step {t}")
        # without the unwritten slots left out, a step differs (the test can fail)
        mp.setattr("t2t_repro.layers.attention.harden", lambda w, k, n, a: harden(w, k, n))
        cache = layer.empty_cache(2, 5, tf.float32)
        step, _ = layer(x[:, :1], cache=cache, cache_update_index=0)
        assert np.abs(step - layer(x[:, :1])).max() > 1e-3


def test_the_exporter_refuses_gumbel_noise_in_one_line():
    from t2t_repro.errors import UserError
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.serving.exporter import check_no_gumbel_noise

    check_no_gumbel_noise(create_hparams("transformer_tiny", "hard_attention_k=2"))
    noisy = create_hparams("transformer_tiny", "hard_attention_k=2,gumbel_noise_weight=0.5")
    with pytest.raises(UserError, match="draws Gumbel noise at every decode") as e:
        check_no_gumbel_noise(noisy)
    assert "\n" not in str(e.value)
