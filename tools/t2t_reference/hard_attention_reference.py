"""T2T 1.15.7's hard attention (``hard_attention_k``, ``gumbel_noise_weight``) on its train dirs.

Companion of ``make_t2t_reference.py`` (``--only=hard``), run in T2T's virtualenv after the shim
is installed, after the packed reference's timing train dir, the language-model and the
relative-attention train dirs exist (it reads them; no training here). What T2T does (cited by
file and function, under ``tensor2tensor/``):

* ``layers/common_attention.py, dot_product_attention`` and ``dot_product_attention_relative``:
  after the softmax, when ``hard_attention_k`` > 0, ``harden_attention_weights(weights, k,
  gumbel_noise_weight)``, then (as before) the dropout and the product with the values.
  ``models/transformer.py, transformer_decoder_layer`` (self and encoder-decoder attention,
  the cached ``_fast_decode`` step included) and ``layers/transformer_layers.py,
  transformer_encoder`` hand ``hparams.hard_attention_k`` and ``gumbel_noise_weight`` to every
  ``multihead_attention``; the encoder-decoder one is always ``dot_product``.
* ``harden_attention_weights``: if ``gumbel_noise_weight`` > 0, ``weights +=
  -log(-log(tf.random_uniform(tf.shape(weights), 1e-5, 1 - 1e-5))) * gumbel_noise_weight``
  in every mode (EVAL and decoding too; the masked keys, whose softmax weight is 0, get noise
  like the others, and weights may turn negative); then ``weights -=
  common_layers.top_kth_iterative(weights, k)``, ``relu``, and ``weights / max(sum, 1e-6)``
  over the keys.
* ``layers/common_layers.py, top_kth_iterative``: ``k - 1`` times, the entries equal to the
  row's maximum are set to 0 (``x * (x < max)``), then the row's maximum: the k-th largest
  DISTINCT value (0 once the values run out, so any k above the row's distinct values leaves
  the softmax as it is). So T2T keeps the entries strictly above it: k=1 keeps nothing (every
  weight 0, the attention's output 0: a layer without attention), k=2 the row's largest
  (ties all kept, each 1/n), k=3 the two largest levels, reweighted by their excess over the
  third (``(w - w_k) / sum``, not ``w / sum``). A tie at the cut is dropped whole.

Cases, each T2T's hparams of a train dir (``flags.txt``'s set, then ``hparams.json``) with the
case's ``--hparams`` string over them, on knobs_reference.py's padded batch (B=2, inputs of 7
positions, targets of 8; the short row has 3 real inputs, so its encoder and encoder-decoder
rows have 3 keys; the decoder's self-attention at position t has t + 1): EVAL logits (no
dropout: T2T's ``set_mode`` zeroes every ``*dropout`` outside TRAIN) and, with inputs, the
encoder output (padding positions included); for the ``*_k2`` cases also ``infer`` decodes with
``decode_length`` = input length + ``EXTRA_LENGTH``: greedy (``_fast_decode``; for relative
attention T2T's ``_slow_greedy_infer``, which has no scores), and for the seq2seq and relative
ones beam-``BEAM_SIZE`` top beam and all beams (``alpha`` ``ALPHA``, ``_fast_decode``); the
language model's greedy decode is of ``LM_PROMPT`` given as ``inputs`` (``lm_reference.py``).

``gumbel_k2``: T2T's ``tf.random_uniform`` is replaced, only inside
``harden_attention_weights`` (the function is wrapped while the graph is built: it runs with a
stand-in of ``common_attention.tf``), by ``UNIFORM``: ``u[b, h, i, j] = ((3*b + 5*h + 7*i +
11*j) % 10 + 0.5) / 10`` in float32, ``b`` the batch row, ``h`` the head, ``i`` the query
and ``j`` the key (T2T's ``minval``/``maxval`` 1e-5 and 1 - 1e-5 are ignored: ``u`` lies in
[0.05, 0.95]); the noise is then T2T's ``-log(-log(u)) * 0.5`` (float32). The same wrapper
keeps each hardening's input (the softmax, before the noise), output and variable scope, and
``write`` checks every row against ``harden_np`` (the rule above in numpy) and counts
(``COUNTS``) the rows where k is above the row's keys (its positive softmax weights; asserted
equal to what the batch's shape gives: decoder queries t < k - 1, the short row for k > 3),
above its length (where ``tf.math.top_k`` would fail), where a tie decides (T2T's k-th
distinct value is not the k-th counted with repeats; asserted none in the timing-signal
models), left empty (every row for k=1) and keeping a key of softmax weight 0 (only with the
noise: asserted), lists the tied rows as (attention, b, head, query) and keeps the smallest
sum T2T renormalises by (asserted above 1e-4: weights off by 1e-6 in a reimplementation
keep the same keys, exact ties aside, and move the output by about 1e-6 / that sum). It checks
that
T2T's greedy scores of ``k2`` are the teacher-forced EVAL log-probabilities of the ids it
decoded (up to EOS). ``harden_*``: T2T's own ``harden_attention_weights`` on the softmax of
crafted logits with ties and masked keys, for each k in ``HARDEN_K`` and, with ``UNIFORM``,
for ``gumbel_noise_weight`` 0.5 and each k in ``HARDEN_GUMBEL_K``, with their ``COUNTS``.
The sha256 of each checkpoint read is kept, so a test sees a train dir made anew since.
"""

import os
import time

FOLDER = "hard_attention"  # under the --out folder (tests/data/t2t_reference)
REFERENCE = "t2t_1.15.7_hard_attention.npz"
TRAIN_DIRS = {
    "seq2seq": os.path.join("packed", "t2t_timing_train_dir"),
    "lm": "t2t_lm_train_dir",
    "relative": "t2t_relative_train_dir",
}
EXTRA_LENGTH = 6
BEAM_SIZE = 2
ALPHA = 0.6
VOCAB = 13
GUMBEL = 0.5
UNIFORM = "u[b, h, i, j] = ((3*b + 5*h + 7*i + 11*j) % 10 + 0.5) / 10 (float32)"
HARDEN_K = (1, 2, 3, 4, 5, 6, 7)  # on crafted weights of 6 keys: 7 is above the axis
HARDEN_GUMBEL_K = (2, 3)
COUNTS = ("rows", "k_above_keys", "k_above_length", "tie_decides", "empty", "kept_masked")
# case: (train dir key, hard_attention_k, gumbel_noise_weight, decodes); k=0: the controls.
CASES = {
    "base": ("seq2seq", 0, 0.0, False),
    "k1": ("seq2seq", 1, 0.0, False),
    "k2": ("seq2seq", 2, 0.0, True),
    "k3": ("seq2seq", 3, 0.0, False),
    "k4": ("seq2seq", 4, 0.0, False),  # above the short row's 3 keys
    "k9": ("seq2seq", 9, 0.0, False),  # above every row's keys: the softmax as it is
    "gumbel_k2": ("seq2seq", 2, GUMBEL, False),
    "lm_base": ("lm", 0, 0.0, False),
    "lm_k1": ("lm", 1, 0.0, False),
    "lm_k2": ("lm", 2, 0.0, True),
    "lm_k3": ("lm", 3, 0.0, False),
    "relative_base": ("relative", 0, 0.0, False),
    "relative_k2": ("relative", 2, 0.0, True),
    "relative_k3": ("relative", 3, 0.0, False),
}
# knobs_reference.py's batch: reversal pairs of different lengths, padding in both rows.
INPUTS = ((4, 7, 9, 11, 5, 2, 1), (8, 3, 1))
TARGETS = ((2, 5, 11, 9, 7, 4, 1), (3, 8, 1))
INPUT_LENGTH, TARGET_LENGTH = 7, 8
LM_TARGETS = ((5, 6, 7, 8, 9, 10, 1), (11, 12, 2, 1))  # counting, as the LM dir learnt
LM_PROMPT = (5, 6, 7)

# relative_reference.py (restored_run) and packed_reference.py (saved_hparams,
# problem_hparams, checkpoint_sha256), handed over by make_t2t_reference.py (a helper module
# serves one script: tests/test_bench_layout.py).
_HELPERS: dict = {}


def uniform_np(np, shape):
    """UNIFORM as numpy float32 of a [B, heads, Lq, Lk] shape."""
    b, h, i, j = np.ix_(*(np.arange(n) for n in shape))
    return (((3 * b + 5 * h + 7 * i + 11 * j) % 10).astype(np.float32) + 0.5) / np.float32(10)


def uniform_tf(tf, calls):
    """The stand-in ``tf.random_uniform(shape, minval, maxval)``: UNIFORM of ``shape``."""

    def random_uniform(shape, minval=0.0, maxval=None, **kwargs):
        assert (minval, maxval) == (1e-5, 1 - 1e-5), (minval, maxval)  # T2T's call
        calls.append(shape)
        b, h, i, j = (tf.range(shape[axis]) for axis in range(4))
        index = (
            3 * b[:, None, None, None]
            + 5 * h[None, :, None, None]
            + 7 * i[None, None, :, None]
            + 11 * j[None, None, None, :]
        )
        return (tf.cast(index % 10, tf.float32) + 0.5) / 10.0

    return random_uniform


def noised(np, weights, gumbel):
    """``weights`` plus T2T's Gumbel noise of ``UNIFORM`` times ``gumbel`` (if > 0), float32."""
    w = weights.astype(np.float32)
    if gumbel > 0:
        w = w + np.float32(gumbel) * -np.log(-np.log(uniform_np(np, w.shape)))
    return w


def kth_distinct(np, w, k):
    """``common_layers.top_kth_iterative``: the k-th largest distinct value of each row."""
    for _ in range(k - 1):
        w = w * (w < w.max(-1, keepdims=True))
    return w.max(-1, keepdims=True)


def harden_np(np, weights, k, gumbel=0.0):
    """T2T's harden_attention_weights in numpy (the docstring's rule), float32."""
    w = noised(np, weights, gumbel)
    out = np.maximum(w - kth_distinct(np, w, k), 0)
    return out / np.maximum(out.sum(-1, keepdims=True), np.float32(1e-6))


def row_flags(np, weights, k, gumbel=0.0):
    """Per row of ``weights`` [..., Lk] (bool [..., 5], ``COUNTS``' order): k above its keys
    (positive softmax weights), k above Lk, a tie decides (T2T's k-th distinct value is not
    the k-th counted with repeats), T2T leaves it empty, T2T keeps a key of weight 0."""
    w, length = noised(np, weights, gumbel), weights.shape[-1]
    kth = np.sort(w, -1)[..., ::-1][..., min(k, length) - 1]
    out = harden_np(np, weights, k, gumbel)
    flags = (
        k > (weights > 0).sum(-1),
        np.full(w.shape[:-1], k > length),
        (kth_distinct(np, w, k)[..., 0] != kth) & (k <= length),
        out.max(-1) == 0,
        ((out > 0) & (weights == 0)).any(-1),
    )
    return np.stack(flags, -1)


def install_capture(tf, common_attention, captured, calls):
    """Wraps T2T's ``harden_attention_weights`` (restore with the returned original): it runs
    with ``UNIFORM`` as ``tf.random_uniform`` and appends (input, output, k, gumbel, scope)."""
    original = common_attention.harden_attention_weights
    stand_in = _HELPERS["packed"].StandIn(common_attention.tf, random_uniform=uniform_tf(tf, calls))

    def harden(weights, k, gumbel_noise_weight):
        saved, common_attention.tf = common_attention.tf, stand_in
        try:
            out = original(weights, k, gumbel_noise_weight)
        finally:
            common_attention.tf = saved
        scope = tf.compat.v1.get_variable_scope().name
        captured.append((weights, out, k, gumbel_noise_weight, scope))
        return out

    common_attention.harden_attention_weights = harden
    return original


def rows_k_above_keys(key, k, hparams):
    """Attention rows with fewer keys than k, from the batch's shape: the decoder's query t has
    t + 1 (causal, padding included), the encoder's and encoder-decoder's the row's ids."""
    per_row = hparams.num_heads * hparams.num_hidden_layers
    if key == "lm":
        return 2 * per_row * min(k - 1, len(LM_TARGETS[0]))
    short = sum(k > len(row) for row in INPUTS)
    return per_row * (2 * min(k - 1, TARGET_LENGTH) + short * (INPUT_LENGTH + TARGET_LENGTH))


def case_hparams(transformer, hparams_lib, train_dir, overrides, problem):
    hparams = _HELPERS["packed"].saved_hparams(transformer, hparams_lib, train_dir)
    hparams.parse(overrides)
    hparams.problem_hparams = problem
    return hparams


def eval_values(tf, modules, hparams, problem, train_dir, features):
    """EVAL logits [B, L, V], with inputs T2T's encoder output [B, Ls, d], and each
    hardening's input and output (``hardened``: a list of (in, out, k, gumbel, scope))."""
    transformer, common_attention = modules
    captured, calls = [], []
    with tf.Graph().as_default():
        graph_features = {k: tf.constant(v[:, :, None, None]) for k, v in features.items()}
        graph_features["target_space_id"] = tf.constant(0, tf.int32)
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem)
        kept, encode = {}, model.encode

        def capturing_encode(*args, **kwargs):  # Keeps Transformer.encode's output.
            out = encode(*args, **kwargs)
            kept["encoder_output"] = out[0]
            return out

        model.encode = capturing_encode
        original = install_capture(tf, common_attention, captured, calls)
        try:
            logits, _ = model(graph_features)
        finally:
            common_attention.harden_attention_weights = original
        assert len(calls) == len(captured) * (hparams.gumbel_noise_weight > 0), len(calls)
        fetch = {"logits": logits, **kept, "hardened": [c[:2] for c in captured]}
        values = _HELPERS["relative"].restored_run(tf, train_dir, fetch)
    values["logits"] = values["logits"].reshape([*features["targets"].shape, VOCAB])
    values["hardened"] = [(*v, *c[2:]) for v, c in zip(values["hardened"], captured, strict=True)]
    return values


def decode_values(tf, transformer, hparams, problem, train_dir, inputs, beams):
    """T2T's ``infer`` of ``inputs`` [B, L]: greedy and, with ``beams``, beam-BEAM_SIZE top and
    all beams (ids, and scores where T2T gives them); a language model's prompt gets the
    ``decode_length`` feature, as ``lm_reference.py``."""
    with tf.Graph().as_default():
        predict = transformer.Transformer(hparams, tf.estimator.ModeKeys.PREDICT, problem)
        features = {"inputs": inputs[:, :, None, None], "target_space_id": 0}
        if not predict.has_input:  # decoding.py's [1, P, 1] of a line (lm_reference.py)
            features.update(inputs=inputs[:, :, None], decode_length=EXTRA_LENGTH)
        searches = [("greedy", 1, 1)] + beams * [
            (f"beam{BEAM_SIZE}", BEAM_SIZE, 1),
            (f"beam{BEAM_SIZE}_all", BEAM_SIZE, BEAM_SIZE),
        ]
        fetch = {}
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            for name, beam, top in searches:
                graph_features = {k: tf.constant(v) for k, v in features.items()}
                result = predict.infer(graph_features, EXTRA_LENGTH, beam, top, ALPHA)
                fetch[f"{name}_ids"] = result["outputs"]
                if result.get("scores") is not None:
                    fetch[f"{name}_scores"] = result["scores"]
        return _HELPERS["relative"].restored_run(tf, train_dir, fetch)


def harden_table(np, tf, common_attention):
    """T2T's harden_attention_weights on the softmax of crafted logits [2, 2, 4, 6]: integer
    logits in [-2, 2] (ties), the last 2 keys of query 2 and the last 5 of query 3 masked."""
    logits = np.random.default_rng(0).integers(-2, 3, size=[2, 2, 4, 6]).astype(np.float32)
    logits[:, :, 2, 4:] = logits[:, :, 3, 1:] = -1e9
    captured, calls = [], []
    with tf.Graph().as_default():
        weights = tf.nn.softmax(tf.constant(logits))
        original = install_capture(tf, common_attention, captured, calls)
        try:
            plain = [common_attention.harden_attention_weights(weights, k, 0.0) for k in HARDEN_K]
            noisy = [
                common_attention.harden_attention_weights(weights, k, GUMBEL)
                for k in HARDEN_GUMBEL_K
            ]
        finally:
            common_attention.harden_attention_weights = original
        assert len(calls) == len(HARDEN_GUMBEL_K), calls
        with tf.compat.v1.Session() as sess:
            weights, plain, noisy = sess.run([weights, plain, noisy])
    return {
        "harden_logits": logits,
        "harden_weights": weights,
        "harden_k": np.asarray(HARDEN_K, np.int32),
        "harden_out": np.asarray(plain, np.float32),
        "harden_gumbel_k": np.asarray(HARDEN_GUMBEL_K, np.int32),
        "harden_gumbel_weight": np.float32(GUMBEL),
        "harden_gumbel_out": np.asarray(noisy, np.float32),
    }


def check_hardened(np, hardened):
    """Every captured row against ``harden_np``; returns the rows and ``COUNTS`` (the number of
    rows of each flag of ``row_flags``), the tied rows as (attention, b, h, query) and the
    smallest kept sum ``sum(relu(w - w_k))`` of a row not left empty (what T2T divides by: a
    change of the weights by d moves the output by about d / it; for k=2 it is the gap between
    the two largest weights, which a change must cross to pick another key)."""
    counts, tied, kept_sum = np.zeros([len(COUNTS)], np.int32), [], np.inf
    for a, (weights, out, k, gumbel, *_) in enumerate(hardened):
        np.testing.assert_allclose(out, harden_np(np, weights, k, gumbel), atol=2e-6)
        flags = row_flags(np, weights, k, gumbel)
        counts += [flags[..., 0].size, *flags.reshape([-1, flags.shape[-1]]).sum(0)]
        tied += [(a, *where) for where in zip(*np.nonzero(flags[..., 2]), strict=True)]
        w = noised(np, weights, gumbel)
        sums = np.maximum(w - kth_distinct(np, w, k), 0).sum(-1)
        kept_sum = min(kept_sum, sums[sums > 0].min(initial=np.inf))
    return counts, np.asarray(tied, np.int32).reshape([-1, 4]), np.float32(kept_sum)


def table_counts(np, arrays):
    """T2T's crafted hardenings against ``harden_np``; ``COUNTS`` per k (then per Gumbel k)."""
    rows = []
    for name, ks, gumbel in (("out", HARDEN_K, 0.0), ("gumbel_out", HARDEN_GUMBEL_K, GUMBEL)):
        for k, out in zip(ks, arrays[f"harden_{name}"], strict=True):
            rows.append(check_hardened(np, [(arrays["harden_weights"], out, k, gumbel)])[0])
    return np.asarray(rows[: len(HARDEN_K)]), np.asarray(rows[len(HARDEN_K) :])


def teacher_forced_scores(np, logits, ids):
    """Sum of the log-softmax of ``logits`` [B, L, V] at ``ids`` [B, L] up to the first EOS."""
    logits = logits.astype(np.float64)
    top = logits.max(-1, keepdims=True)
    log_probs = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs, ids[..., None], -1)[..., 0]
    return (picked * (np.cumsum(ids == 1, 1) - (ids == 1) == 0)).sum(1)


def write(out_dir, relative_reference, packed_reference):
    """Writes ``FOLDER/REFERENCE``; returns its arrays' shapes and a per-case report. The
    modules: the companions named above."""
    start = time.process_time()
    _HELPERS.update(relative=relative_reference, packed=packed_reference)
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.layers import common_attention, modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib

    packed = _HELPERS["packed"]
    inputs = _HELPERS["packed"].padded(np, INPUTS, INPUT_LENGTH)
    arrays = {
        "inputs": inputs,
        "targets": _HELPERS["packed"].padded(np, TARGETS, TARGET_LENGTH),
        "lm_targets": _HELPERS["packed"].padded(np, LM_TARGETS, len(LM_TARGETS[0])),
        "lm_prompt": np.asarray(LM_PROMPT, np.int32),
        "extra_length": np.asarray(EXTRA_LENGTH),
        "beam_size": np.asarray(BEAM_SIZE),
        "alpha": np.float32(ALPHA),
        "uniform": np.asarray(UNIFORM),
        "counts": np.asarray(COUNTS),
        **harden_table(np, tf, common_attention),
    }
    arrays["harden_counts"], arrays["harden_gumbel_counts"] = table_counts(np, arrays)
    assert arrays["harden_counts"][1:-1, 3].min() > 0  # a tie decides for k = 2..6 here
    for key, rel_dir in TRAIN_DIRS.items():
        arrays[f"{key}_train_dir"] = np.asarray(rel_dir)
        sha256 = packed.checkpoint_sha256(os.path.join(out_dir, rel_dir))
        arrays[f"{key}_sha256"] = np.asarray(sha256)
    report = {}
    for case, (key, k, gumbel, decodes) in CASES.items():
        names = (f"hard_attention_k={k}" * (k > 0), f"gumbel_noise_weight={gumbel}" * (gumbel > 0))
        overrides = ",".join(name for name in names if name)
        train_dir = os.path.join(out_dir, TRAIN_DIRS[key])
        problem = packed.problem_hparams(hparam, modalities, key != "lm")
        hparams = case_hparams(transformer, hparams_lib, train_dir, overrides, problem)
        arrays[f"{case}_hparams"] = np.asarray(overrides)
        if key == "lm":  # a batch of one prompt, as lm_reference.py decodes
            features, prompt = {"targets": arrays["lm_targets"]}, arrays["lm_prompt"][None]
        else:
            features, prompt = {"inputs": inputs, "targets": arrays["targets"]}, inputs
        args = (tf, transformer, hparams, problem, train_dir)
        values = eval_values(tf, (transformer, common_attention), *args[2:], features)
        hardened = values.pop("hardened")
        assert len(hardened) == (k > 0) * 2 * (1 if key == "lm" else 3), len(hardened)
        if k > 0:
            values["counts"], values["tied"], values["min_kept_sum"] = check_hardened(np, hardened)
            values["attention"] = np.asarray([h[4] for h in hardened])
            assert values["counts"][1] == rows_k_above_keys(key, k, hparams), values["counts"]
            assert key == "relative" or values["counts"][3] == 0, values["counts"]
            assert (values["counts"][5] > 0) == (gumbel > 0), values["counts"]
            assert values["min_kept_sum"] > 1e-4, values["min_kept_sum"]
        if decodes:
            found = decode_values(*args, prompt, beams=key != "lm")
            values.update(
                {n: v.reshape(v.shape[:2]) if v.ndim == 4 else v for n, v in found.items()}
            )
        for name, value in values.items():
            value = np.asarray(value)
            arrays[f"{case}_{name}"] = (
                value.astype(np.float32) if value.dtype.kind == "f" else value
            )
        control = arrays[f"{'' if key == 'seq2seq' else key + '_'}base_logits"]
        report[case] = {
            "hparams": overrides,
            "max |logits - control|": float(np.abs(arrays[f"{case}_logits"] - control).max()),
            **dict(zip(COUNTS, values.get("counts", np.zeros(0)).tolist(), strict=False)),
            **({"tied (attention, b, h, query)": values["tied"].tolist()} if k else {}),
            **({"min kept sum": float(values["min_kept_sum"])} if k else {}),
        }
    assert np.abs(arrays["k9_logits"] - arrays["base_logits"]).max() < 1e-5  # softmax as is
    for case in ("k1", "lm_k1"):  # every row empty: no attention at all
        assert arrays[f"{case}_counts"][4] == arrays[f"{case}_counts"][0], case
    # T2T's cached greedy decode is its teacher-forced EVAL of what it decoded (k=2 too)
    ids = arrays["k2_greedy_ids"]
    problem = packed.problem_hparams(hparam, modalities, True)
    train_dir = os.path.join(out_dir, TRAIN_DIRS["seq2seq"])
    hparams = case_hparams(
        transformer, hparams_lib, train_dir, arrays["k2_hparams"].item(), problem
    )
    features = {"inputs": inputs, "targets": ids * (np.cumsum(ids == 1, 1) - (ids == 1) == 0)}
    forced = eval_values(tf, (transformer, common_attention), hparams, problem, train_dir, features)
    scores = teacher_forced_scores(np, forced["logits"], features["targets"])
    report["k2 greedy scores - teacher-forced EVAL"] = float(
        np.abs(scores - arrays["k2_greedy_scores"]).max()
    )
    assert report["k2 greedy scores - teacher-forced EVAL"] < 1e-5, report
    os.makedirs(os.path.join(out_dir, FOLDER), exist_ok=True)
    np.savez_compressed(os.path.join(out_dir, FOLDER, REFERENCE), **arrays)
    report["harden_counts (per k of HARDEN_K)"] = arrays["harden_counts"].tolist()
    report["harden_gumbel_counts"] = arrays["harden_gumbel_counts"].tolist()
    report["cpu seconds"] = round(time.process_time() - start, 1)
    return {k: v.shape for k, v in arrays.items()}, report
