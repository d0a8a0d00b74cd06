"""Beam search and greedy decoding against hand-computed cases and a plain-Python reference.

Toy model: log-prob tables ``table[b, i, prev2, prev, :]`` (batch item, step, the two last
tokens). The toy ``symbols_to_logits_fn`` reads the batch item and both tokens from its cache
only (a [N, decode_length] token buffer written at position i, like the model's K/V buffers),
so a cache that is not tiled and reordered with its beam gives wrong logits.
Vocabulary in the hand cases: 0 pad, 1 EOS, 2 "a", 3 "b", 4..: others.
"""

import math

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.beam_search import beam_search
from t2t_repro.decoding.greedy import greedy_search
from t2t_repro.decoding.postprocess import strip_after_eos

NEG = -30.0  # "impossible" logit: probability e-30, invisible at the tolerances used here.


def markov(rows: dict, vocab: int, batch: int = 1, steps: int = 8) -> np.ndarray:
    """Table from {prev: {token: prob}} (same for every batch item, step and prev2);
    an unlisted prev row gives EOS probability 1."""
    table = np.full([vocab, vocab], NEG, np.float32)
    for prev in range(vocab):
        for tok, p in rows.get(prev, {1: 1.0}).items():
            table[prev, tok] = math.log(p)
    return np.broadcast_to(table, [batch, steps, vocab, vocab, vocab]).copy()


def random_table(seed, batch, steps, vocab, eos_bias=0.6, scale=2.0) -> np.ndarray:
    """Second-order random log-probs; EOS gets likelier with the step, so beams end at varied
    times."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=[batch, steps, vocab, vocab, vocab]).astype(np.float32) * scale
    logits[..., 1] += eos_bias * np.arange(steps, dtype=np.float32)[None, :, None, None] - 2.0
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


class ToyModel:
    """``symbols_to_logits_fn`` and cache for a table; counts its calls (visible in eager mode)."""

    def __init__(self, table: np.ndarray):
        self.table = tf.constant(table, tf.float32)
        self.batch, self.steps = table.shape[0], table.shape[1]
        self.positions = tf.range(self.steps)[None]  # [1, steps], made once: the searches
        self.calls = 0  # run eagerly, where each op (a slice most) costs its dispatch

    def init_cache(self):
        return {"batch": tf.range(self.batch), "hist": tf.zeros([self.batch, self.steps], tf.int32)}

    def __call__(self, ids, i, cache):
        self.calls += 1
        prev = tf.gather(ids, i, axis=1)  # written at i, so the history's token at i
        hist = tf.where(self.positions == i, tf.expand_dims(prev, 1), cache["hist"])
        prev2 = tf.where(i > 0, tf.gather(hist, tf.maximum(i - 1, 0), axis=1), 0)
        index = tf.stack([cache["batch"], tf.fill(tf.shape(prev), i), prev2, prev], axis=1)
        return tf.gather_nd(self.table, index), dict(cache, hist=hist)


def run_beam(table, beam, alpha, decode_length, stop_early=True, jit=False):
    model = ToyModel(table)

    def search():
        return beam_search(
            model,
            tf.zeros([model.batch], tf.int32),
            beam,
            decode_length,
            table.shape[-1],
            alpha,
            states=model.init_cache(),
            stop_early=stop_early,
        )

    # No autograph, as the searches trace (decoding/search.py): their loops are explicit
    # tf.while_loops, and its rewrite was a third of test_with_transformer_model's CPU.
    ids, scores = tf.function(search, jit_compile=True, autograph=False)() if jit else search()
    return ids.numpy(), scores.numpy(), model.calls


def reference_beam_search(table, beam, alpha, decode_length, stop_early=True, eos=1):
    """T2T's algorithm, written directly on Python lists of prefixes, in float32 arithmetic.
    Ranking uses stable sorts (= top_k's lower-index-first on ties)."""
    f32, inf = np.float32, np.float32(1e7)
    batch, vocab = table.shape[0], table.shape[-1]

    def penalty(n):
        return np.power(f32(5 + n) / f32(6), f32(alpha))

    def top(items, k):  # items: (score, payload...)
        return sorted(items, key=lambda t: -t[0])[:k]

    alive = [[(f32(0) if k == 0 else -inf, (0,)) for k in range(beam)] for _ in range(batch)]
    finished = [[(-inf, (0,), False)] * beam for _ in range(batch)]

    def keep_going(i):
        bound = [alive[b][0][0] / penalty(decode_length) for b in range(batch)]
        if stop_early:
            best = [max(s for s, _, _ in finished[b]) for b in range(batch)]
        else:
            best = [min(s for fin in finished for s, _, _ in fin)] * batch
        return i < decode_length and not all(best[b] > bound[b] for b in range(batch))

    i = 0
    while keep_going(i):
        pen = penalty(i + 1)
        for b in range(batch):
            cands = []
            for logp, seq in alive[b]:
                row = table[b, i, seq[i - 1] if i > 0 else 0, seq[i]]
                row = row - (row.max() + np.log(np.exp(row - row.max()).sum()))
                cands += [(f32(row[v] + logp) / pen, seq + (v,)) for v in range(vocab)]
            cands = top(cands, 2 * beam)
            alive[b] = [
                (s * pen, seq)
                for _, s, seq in top(
                    [(s + (-inf if seq[-1] == eos else f32(0)), s, seq) for s, seq in cands], beam
                )
            ]
            finished[b] = top(
                finished[b]
                + [
                    (s + (f32(0) if seq[-1] == eos else -inf), seq, seq[-1] == eos)
                    for s, seq in cands
                ],
                beam,
            )
        i += 1

    ids = np.zeros([batch, beam, decode_length + 1], np.int32)
    scores = np.zeros([batch, beam], np.float32)
    for b in range(batch):
        done = any(flag for _, _, flag in finished[b])
        for k, (s, seq, *_) in enumerate(finished[b] if done else alive[b]):
            ids[b, k, : len(seq)], scores[b, k] = seq, s
    return ids, scores, i


def assert_same_beams(got_ids, got_scores, want_ids, want_scores):
    """Real hypotheses match exactly (tokens) and closely (scores); -INF filler only as filler."""
    real = want_scores > -1e6
    np.testing.assert_array_equal(got_ids[real], want_ids[real])
    np.testing.assert_allclose(got_scores[real], want_scores[real], rtol=1e-5, atol=1e-5)
    assert np.all(got_scores[~real] < -1e6)


def lp(n, alpha):
    return ((5 + n) / 6) ** alpha


# Case A: "EOS" now (0.45) against "a" (0.55) whose every continuation is worse.
CASE_A = {0: {1: 0.45, 2: 0.55}, 2: {2: 0.55, 3: 0.45}, 3: {1: 0.9, 2: 0.1}}
# Case B: "EOS" (0.4) against "a EOS" (0.6 * 0.62 = 0.372): alpha decides.
CASE_B = {0: {1: 0.4, 2: 0.6}, 2: {1: 0.62, 3: 0.38}, 3: {1: 1.0}}


def test_shorter_finished_beats_longer_alive():
    ids, scores, calls = run_beam(markov(CASE_A, 5), beam=2, alpha=0.6, decode_length=4)
    # Step 0: finished "EOS" = log .45 / lp(1) = -0.799; alive "a" = log .55.
    #   bound log .55 / lp(4) = -0.469 > -0.799: go on.
    # Step 1: alive "a a" = log .3025 = -1.196 (nothing finishes); bound -1.196 / 1.275 = -0.937
    #   < -0.799: stop. The best completion "a b EOS" would score log(.2228) / lp(3) = -1.263.
    np.testing.assert_array_equal(ids[0, 0], [0, 1, 0, 0, 0])
    np.testing.assert_allclose(scores[0, 0], math.log(0.45), rtol=1e-6)
    # The second slot holds only the near-impossible "a EOS" ((log .55 - 30) / lp(2)).
    np.testing.assert_allclose(scores[0, 1], (math.log(0.55) + NEG) / lp(2, 0.6), rtol=1e-5)
    assert calls == 2
    assert_same_beams(ids, scores, *reference_beam_search(markov(CASE_A, 5), 2, 0.6, 4)[:2])


def test_early_stopping_bound():
    table = markov(CASE_A, 5)
    # stop_early=False waits until the worst finished slot beats the bound: at step 2 "a b EOS"
    # (-1.263) fills slot 2 and the best alive "a a a" gives log(.166) / lp(4) = -1.408.
    ids, scores, calls = run_beam(table, beam=2, alpha=0.6, decode_length=4, stop_early=False)
    assert calls == 3
    np.testing.assert_array_equal(ids[0], [[0, 1, 0, 0, 0], [0, 2, 3, 1, 0]])
    np.testing.assert_allclose(
        scores[0], [math.log(0.45), math.log(0.55 * 0.45 * 0.9) / lp(3, 0.6)], rtol=1e-5
    )
    # Without finishing anything the loop runs the full length.
    never = markov({p: {2: 0.7, 3: 0.3} for p in range(5)}, 5)
    assert run_beam(never, beam=2, alpha=0.6, decode_length=4)[2] == 4
    steps = {False: calls, True: run_beam(table, 2, 0.6, 4)[2]}  # (False's: run above)
    for stop_early in (True, False):
        assert steps[stop_early] == reference_beam_search(table, 2, 0.6, 4, stop_early)[2]


@pytest.mark.parametrize(
    "alpha, want_ids, want_score",
    [
        (0.0, [0, 1, 0, 0, 0, 0], math.log(0.4)),  # -0.916 > -0.989
        (0.6, [0, 2, 1, 0, 0, 0], math.log(0.372) / lp(2, 0.6)),  # -0.902 > -0.916
        (1.0, [0, 2, 1, 0, 0, 0], math.log(0.372) / lp(2, 1.0)),  # -0.848 > -0.916
    ],
)
def test_alpha_changes_the_winner(alpha, want_ids, want_score):
    ids, scores, _ = run_beam(markov(CASE_B, 5), beam=2, alpha=alpha, decode_length=5)
    np.testing.assert_array_equal(ids[0, 0], want_ids)
    np.testing.assert_allclose(scores[0, 0], want_score, rtol=1e-5)


def test_fallback_returns_alive_with_raw_log_probs():
    # EOS is the 7th most likely token after every prefix, so it never reaches the top 2*beam.
    after_a = {2: 0.5, 3: 0.3, 4: 0.1, 5: 0.05, 6: 0.03, 7: 0.019, 1: 0.001}
    after_b = {2: 0.4, 3: 0.35, 4: 0.1, 5: 0.08, 6: 0.05, 7: 0.019, 1: 0.001}
    table = markov(
        {0: after_a, 2: after_a, 3: after_b, 4: after_a, 5: after_a, 6: after_a, 7: after_a}, 8
    )
    ids, scores, calls = run_beam(table, beam=2, alpha=1.0, decode_length=3)
    # Beams: "a a a" = .125 and "a a b" = .075 ("a b a" = .06); scores are NOT divided by lp(3).
    np.testing.assert_array_equal(ids[0], [[0, 2, 2, 2], [0, 2, 2, 3]])
    np.testing.assert_allclose(scores[0], np.log([0.125, 0.075]), rtol=1e-5)
    assert calls == 3


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "beam, alpha, stop_early",
    [(1, 0.6, True), (2, 0.0, True), (3, 0.6, True), (4, 1.0, False), (4, 0.6, True)],
)
def test_matches_reference(seed, beam, alpha, stop_early):
    # Three batch items with different second-order tables (the cache must follow its beam).
    table = random_table(seed, batch=3, steps=6, vocab=7)
    ids, scores, calls = run_beam(table, beam, alpha, 6, stop_early)
    want_ids, want_scores, want_steps = reference_beam_search(table, beam, alpha, 6, stop_early)
    assert_same_beams(ids, scores, want_ids, want_scores)
    assert calls == want_steps
    assert np.all(np.diff(scores, axis=1) <= 0)  # Best first.


@pytest.mark.parametrize("seed, alpha, want_steps", [(14, 0.0, 6), (27, 0.0, 5)])
def test_stop_early_false_uses_batch_wide_min(seed, alpha, want_steps):
    # T2T's stop_early=False compares the minimum finished score over the WHOLE batch with each
    # item's bound; a per-item minimum would stop these cases one or two steps sooner.
    table = random_table(seed, batch=3, steps=6, vocab=7, eos_bias=1.5)
    ids, scores, calls = run_beam(table, 2, alpha, 6, stop_early=False)
    want_ids, want_scores, want_steps_ref = reference_beam_search(table, 2, alpha, 6, False)
    assert calls == want_steps_ref == want_steps
    assert_same_beams(ids, scores, want_ids, want_scores)


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_a_tensor_stop_rule_runs_as_the_python_one_and_keeps_the_best_beam(seed):
    """``stop_early`` as a scalar bool tensor (the SavedModel's two signatures share one
    search, serving/exporter.py): the same ids, scores and steps as the Python bool. And the
    best beam is the same under both rules, which only decide when the loop ends (these seeds:
    the best one's stops a step sooner)."""
    table = random_table(seed, batch=3, steps=6, vocab=7, eos_bias=1.0)
    runs = {}
    for rule in (True, False):
        runs[rule] = run_beam(table, 3, 0.6, 6, rule)
        ids, scores, calls = run_beam(table, 3, 0.6, 6, tf.constant(rule))
        np.testing.assert_array_equal(ids, runs[rule][0])
        np.testing.assert_array_equal(scores, runs[rule][1])
        assert calls == runs[rule][2]
    assert runs[True][2] < runs[False][2]
    np.testing.assert_array_equal(runs[True][0][:, 0], runs[False][0][:, 0])
    np.testing.assert_array_equal(runs[True][1][:, 0], runs[False][1][:, 0])


@pytest.mark.slow
def test_jit_matches_eager_and_reference():
    table = random_table(11, batch=2, steps=7, vocab=9)
    eager = run_beam(table, 4, 0.6, 7)
    jit = run_beam(table, 4, 0.6, 7, jit=True)
    np.testing.assert_array_equal(jit[0], eager[0])
    np.testing.assert_allclose(jit[1], eager[1], rtol=1e-5, atol=1e-5)
    assert_same_beams(*jit[:2], *reference_beam_search(table, 4, 0.6, 7)[:2])


def test_jit_with_unknown_batch_size():
    table = random_table(12, batch=3, steps=5, vocab=6)
    model = ToyModel(table)

    @tf.function(
        jit_compile=True,
        autograph=False,
        input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 5], tf.int32)],
    )
    def search(batch_index, hist):
        return beam_search(
            model,
            tf.zeros_like(batch_index),
            3,
            5,
            6,
            0.6,
            states={"batch": batch_index, "hist": hist},
        )

    ids, scores = search(tf.range(3), tf.zeros([3, 5], tf.int32))
    assert_same_beams(ids.numpy(), scores.numpy(), *reference_beam_search(table, 3, 0.6, 5)[:2])


def test_batch_items_are_independent():
    t0 = random_table(3, batch=1, steps=6, vocab=7)
    never = {p: {2: 0.5, 3: 0.3, 4: 0.2} for p in range(7)}  # Two items that never finish:
    t1, t1b = markov(never, 7, steps=6), markov({p: {4: 0.6, 5: 0.4} for p in range(7)}, 7, steps=6)
    alone = run_beam(t0, 3, 0.6, 6)
    with_t1 = run_beam(np.concatenate([t0, t1]), 3, 0.6, 6)
    with_t1b = run_beam(np.concatenate([t0, t1b]), 3, 0.6, 6)
    for got in (with_t1, with_t1b):  # The loop runs to decode_length in both: all beams equal.
        np.testing.assert_array_equal(got[0][0], with_t1[0][0])
        np.testing.assert_allclose(got[1][0], with_t1[1][0], rtol=1e-6)
    # Alone, item 0 may stop earlier (the stop test is over the whole batch); the best is the same.
    np.testing.assert_array_equal(alone[0][0, 0], with_t1[0][0, 0])
    np.testing.assert_allclose(alone[1][0, 0], with_t1[1][0, 0], rtol=1e-6)
    want = reference_beam_search(np.concatenate([t0, t1]), 3, 0.6, 6)
    assert_same_beams(*with_t1[:2], *want[:2])
    assert with_t1[2] == with_t1b[2] == 6


def peaked_table(seed, batch, steps, vocab, eos_at):
    """Argmax probability 0.97 at every prefix; the argmax is EOS from step eos_at[b] on."""
    rng = np.random.default_rng(seed)
    table = np.full([batch, steps, vocab, vocab, vocab], math.log(0.03 / (vocab - 1)), np.float32)
    best = rng.integers(2, vocab, size=[batch, steps, vocab, vocab])
    for b in range(batch):
        best[b, eos_at[b] :] = 1
    np.put_along_axis(table, best[..., None], math.log(0.97), axis=-1)
    return table


def greedy_reference(table, decode_length):
    """Walks the argmax path; log-prob up to and including the first EOS."""
    rows = []
    for b in range(table.shape[0]):
        seq, total, ended = [0], 0.0, False
        for i in range(decode_length):
            row = table[b, i, seq[i - 1] if i > 0 else 0, seq[i]]
            tok = int(np.argmax(row))
            total += 0.0 if ended else float(row[tok])
            ended |= tok == 1
            seq.append(tok)
        rows.append((seq, total))
    return rows


def test_greedy_and_beam_size_one():
    table = peaked_table(5, batch=2, steps=6, vocab=8, eos_at=[2, 4])
    model = ToyModel(table)

    @tf.function(jit_compile=True, autograph=False)
    def search():
        return greedy_search(model, tf.zeros([2], tf.int32), 6, model.init_cache())

    ids, log_probs = search()
    ids, log_probs = ids.numpy(), log_probs.numpy()
    ref = greedy_reference(table, 6)
    # Stops after step 4 (both rows have EOS); row 0 kept generating after its EOS at step 2,
    # but its log-prob stops at the EOS: 3 * log .97.
    for b, (seq, total) in enumerate(ref):
        np.testing.assert_array_equal(ids[b, :6], seq[:6])
        np.testing.assert_allclose(log_probs[b], total, rtol=1e-5)
    assert ids[0, 3] == 1 and np.all(ids[0, 4:6] != 0) and np.all(ids[:, 6] == 0)
    np.testing.assert_allclose(log_probs, [3 * math.log(0.97), 5 * math.log(0.97)], rtol=1e-5)
    # T2T's beam search with beam 1 ranks finished and alive separately; on a peaked table it
    # agrees with greedy: same tokens, and score = log-prob / lp(length).
    beam_ids, beam_scores, _ = run_beam(table, beam=1, alpha=0.6, decode_length=6, jit=True)
    for b in range(2):
        tokens = strip_after_eos(ids[b])
        assert strip_after_eos(beam_ids[b, 0]) == tokens
        np.testing.assert_allclose(
            beam_scores[b, 0], log_probs[b] / lp(len(tokens) + 1, 0.6), rtol=1e-5
        )


def test_greedy_stops_at_decode_length_without_eos():
    model = ToyModel(markov({p: {2: 0.7, 3: 0.3} for p in range(5)}, 5, steps=4))
    ids, log_probs = greedy_search(model, tf.zeros([1], tf.int32), 4, model.init_cache())
    np.testing.assert_array_equal(ids.numpy(), [[0, 2, 2, 2, 2]])
    np.testing.assert_allclose(log_probs.numpy(), [4 * math.log(0.7)], rtol=1e-5)
    assert model.calls == 4


def test_strip_after_eos():
    assert strip_after_eos([0, 5, 6, 1, 7, 0]) == [5, 6]
    assert strip_after_eos(np.array([0, 5, 6, 7], np.int32)) == [5, 6, 7]
    assert strip_after_eos([0, 1, 0, 0]) == []
    assert strip_after_eos([0, 5, 0, 6, 0, 0]) == [5, 0, 6]


@pytest.mark.slow
def test_with_transformer_model():
    """Real decode_step under XLA: the best hypothesis' score is its teacher-forced log-prob
    (full forward pass) over lp(length)."""
    import keras

    from tests.model_utils import build_model
    from tests.tools import NO_ENCODER_LAYER

    keras.utils.set_random_seed(0)
    model = build_model(  # one decoder layer: the scores are the model's whatever its layers
        "transformer_tiny",
        f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER}",
        vocab_size=20,
    )
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0]])
    decode_length, beam, alpha = 8, 3, 0.6

    @tf.function(jit_compile=True, autograph=False)
    def search(inputs):
        cache = model.init_cache(inputs, decode_length)
        beams = beam_search(
            model.decode_step, tf.zeros([2], tf.int32), beam, decode_length, 20, alpha, states=cache
        )
        greedy = greedy_search(
            model.decode_step,
            tf.zeros([2], tf.int32),
            decode_length,
            model.init_cache(inputs, decode_length),
        )
        return beams, greedy

    (ids, scores), (greedy_ids, greedy_lp) = search(inputs)

    # Each checked score beside its row, tokens and length penalty; the hypotheses are then
    # teacher-forced in one eager pass, padded to one length: the decoder is causal, so a
    # position's logits never read the padding after it (one pass, not one per hypothesis:
    # ~0.4 core-s less, AMD EPYC Zen 3).
    checks = []
    for b in range(2):
        for k in range(beam):
            if scores[b, k] < -1e6:  # -INF filler (e.g. EOS grown from a -INF beam at step 0).
                continue
            row = [int(t) for t in ids[b, k, 1:]]
            if 1 in row:  # Finished: normalised by lp of its length (EOS included).
                targets = row[: row.index(1) + 1]
                checks.append((scores[b, k], b, targets, lp(len(targets), alpha)))
            else:  # Fallback: raw log-prob of the full-length alive beam.
                checks.append((scores[b, k], b, row, 1.0))
        row = [int(t) for t in greedy_ids[b, 1:]]
        targets = row[: row.index(1) + 1] if 1 in row else row
        checks.append((greedy_lp[b], b, targets, 1.0))
    padded = np.zeros([len(checks), max(len(c[2]) for c in checks)], np.int32)
    for i, (_, _, targets, _) in enumerate(checks):
        padded[i, : len(targets)] = targets
    rows = tf.gather(inputs, [b for _, b, _, _ in checks])
    logits = model({"inputs": rows, "targets": tf.constant(padded)})
    log_probs = tf.nn.log_softmax(logits).numpy()
    for i, (score, _, targets, penalty) in enumerate(checks):
        want = log_probs[i, np.arange(len(targets)), targets].sum() / penalty
        np.testing.assert_allclose(score, want, rtol=2e-4, atol=2e-4)
