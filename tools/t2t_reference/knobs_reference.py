"""T2T 1.15.7's Transformer with three attention-bias hparams set, on existing train dirs.

Companion of ``make_t2t_reference.py`` (``--only=knobs``), run in T2T's virtualenv after the
shim is installed, after the packed reference's timing train dir and the language-model train
dir exist (it reads them; no training here). What T2T does with each hparam (cited by file and
function, under ``tensor2tensor/``):

* ``proximity_bias``: ``common_attention.attention_bias_proximal`` (minus log1p of the
  distance) added to the encoder's self-attention bias (``layers/transformer_layers.py,
  transformer_prepare_encoder``), to the decoder's (``models/transformer.py,
  transformer_prepare_decoder``), and in ``Transformer._fast_decode`` to the cached step's
  bias (the row of the step, over the keys so far). On an unpacked batch with the encoder's
  usual bias this fails in T2T: ``layers/transformer_layers.py, transformer_encoder`` reads
  the padding back from the self-attention bias (``attention_bias_to_padding``, a squeeze of
  its query axis), which the proximal term has made [B, 1, L, L]: a ``ValueError`` at graph
  build, EVAL and ``infer`` alike (tensorflow/tensor2tensor issue #1262). It runs with packed
  features (the nonpadding is then ``features_to_nonpadding``), so ``prox_packed`` and
  ``base_packed`` give the batch as packed rows of one example each (segmentation 1 on the
  ids, positions 0, 1, ...), which T2T computes as the unpacked batch at the real targets
  (``write`` checks ``base_packed`` against ``base``), and with ``unidirectional_encoder``
  (whose padding comes from the encoder-decoder bias) it runs unpacked;
* ``unidirectional_encoder``: the encoder's self-attention bias is
  ``attention_bias_lower_triangle`` alone (no padding bias); the encoder-decoder bias still
  ignores padding, and ``models/transformer.py, transformer_encode`` passes it as
  ``attn_bias_for_padding`` so that ``transformer_encoder``'s pad remover reads the padding
  from it (the encoder output at padding positions shows it);
* ``causal_decoder_self_attention=False``: the decoder's self-attention bias is
  ``attention_bias_ignore_padding`` of ``embedding_to_padding`` of the targets' embedding
  (ids 0 embed to zeros, before the shift right) instead of the lower triangle. T2T's
  ``_fast_decode`` builds its step bias from ``attention_bias_lower_triangle`` whatever this
  hparam: it decodes causally anyway (the ``noncausal`` decodes equal the ``base`` ones, and
  ``all``'s equal ``prox_uni``'s; ``write`` checks it).

Per case, T2T's hparams of the train dir (``flags.txt``'s set, then ``hparams.json``) with the
case's ``--hparams`` string over them: EVAL logits (no dropout) on a padded batch (B=2, rows of
different lengths; or ``<case>_error``, T2T's exception), and for the unpacked seq2seq cases
the encoder output and greedy ``infer`` ids and scores (``_greedy_infer``, ``_fast_decode``;
``decode_length`` = input length + ``EXTRA_LENGTH``; or ``<case>_greedy_error``); for the
language model also a greedy decode of ``LM_PROMPT`` given as ``inputs`` (forced partial
targets, as ``lm_reference.py``). The sha256 of each checkpoint read is kept, so a test sees a
train dir made anew since.
"""

import os
import sys

FOLDER = "knobs"  # under the --out folder (tests/data/t2t_reference)
REFERENCE = "t2t_1.15.7_knobs.npz"
TRAIN_DIRS = {"seq2seq": os.path.join("packed", "t2t_timing_train_dir"), "lm": "t2t_lm_train_dir"}
EXTRA_LENGTH = 6
VOCAB = 13
PROXIMITY = "proximity_bias=true"
UNIDIRECTIONAL = "unidirectional_encoder=true"
NONCAUSAL = "causal_decoder_self_attention=false"
# case: (train dir key, T2T --hparams string, packed features); base* and prox_uni: controls.
CASES = {
    "base": ("seq2seq", "", False),
    "prox": ("seq2seq", PROXIMITY, False),  # T2T raises (docstring)
    "uni": ("seq2seq", UNIDIRECTIONAL, False),
    "noncausal": ("seq2seq", NONCAUSAL, False),
    "all": ("seq2seq", ",".join((PROXIMITY, UNIDIRECTIONAL, NONCAUSAL)), False),
    "prox_uni": ("seq2seq", ",".join((PROXIMITY, UNIDIRECTIONAL)), False),
    "base_packed": ("seq2seq", "", True),
    "prox_packed": ("seq2seq", PROXIMITY, True),
    "lm_base": ("lm", "", False),
    "lm_prox": ("lm", PROXIMITY, False),
}
# Reversal pairs (what the timing dir learnt) of different lengths; targets 1 longer than
# inputs (a trailing pad in both rows), so that the two lengths differ.
INPUTS = ((4, 7, 9, 11, 5, 2, 1), (8, 3, 1))
TARGETS = ((2, 5, 11, 9, 7, 4, 1), (3, 8, 1))
INPUT_LENGTH, TARGET_LENGTH = 7, 8
LM_TARGETS = ((5, 6, 7, 8, 9, 10, 1), (11, 12, 2, 1))  # counting, as the LM dir learnt
LM_PROMPT = (5, 6, 7)

# The modules make_t2t_reference.py hands to ``write`` (a helper serves one script only:
# tests/test_bench_layout.py): relative_reference.py (restored_run) and packed_reference.py
# (saved_hparams, problem_hparams, checkpoint_sha256).
_HELPERS: dict = {}


def packed_as_rows(np, features):
    """The batch as packed rows of one example each: ``<side>_segmentation`` 1 on the ids (0 at
    padding), ``<side>_position`` 0, 1, ... on them (packed_reference.py's features)."""
    out = dict(features)
    for side, ids in features.items():
        seg = (ids != 0).astype(np.int32)
        out[f"{side}_segmentation"] = seg
        out[f"{side}_position"] = (np.arange(ids.shape[1], dtype=np.int32) * seg).astype(np.int32)
    return out


def attempt(fn, *args):
    """``fn(*args)``, or {"error": "<exception class>: <its message, without the node>"}."""
    try:
        return fn(*args)
    except (ValueError, TypeError) as e:
        message = str(e).strip().splitlines()[-1].strip().split(" for '{{node")[0]
        return {"error": f"{type(e).__name__}: {message.removeprefix('ValueError: ')}"}


def case_hparams(transformer, hparams_lib, train_dir, overrides, problem):
    """T2T's hparams of ``train_dir`` with the case's ``--hparams`` string over them."""
    hparams = _HELPERS["packed"].saved_hparams(transformer, hparams_lib, train_dir)
    hparams.parse(overrides)
    hparams.problem_hparams = problem
    return hparams


def eval_values(tf, transformer, hparams, problem, train_dir, features):
    """EVAL logits [B, L, V] and, with inputs, T2T's encoder output [B, Ls, d]."""
    with tf.Graph().as_default():
        graph_features = {
            k: tf.constant(v[:, :, None, None] if k in ("inputs", "targets") else v)
            for k, v in features.items()
        }
        graph_features["target_space_id"] = tf.constant(0, tf.int32)
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem)
        captured, encode = {}, model.encode

        def capturing_encode(*args, **kwargs):  # Keeps Transformer.encode's output.
            out = encode(*args, **kwargs)
            captured["encoder_output"] = out[0]
            return out

        model.encode = capturing_encode
        logits, _ = model(graph_features)
        fetch = {"logits": logits, **captured}
        values = _HELPERS["relative"].restored_run(tf, train_dir, fetch)
    values["logits"] = values["logits"].reshape([*features["targets"].shape, VOCAB])
    return values


def greedy_values(tf, transformer, hparams, problem, train_dir, inputs):
    """T2T's greedy ``infer`` of ``inputs`` [B, L] (ids and scores), weights from disk; a
    language model's prompt gets the ``decode_length`` feature, as ``lm_reference.py``."""
    with tf.Graph().as_default():
        predict = transformer.Transformer(hparams, tf.estimator.ModeKeys.PREDICT, problem)
        features = {"inputs": tf.constant(inputs[:, :, None, None]), "target_space_id": 0}
        if not predict.has_input:  # decoding.py's [1, P, 1] of a line (lm_reference.py)
            features.update(inputs=tf.constant(inputs[:, :, None]), decode_length=EXTRA_LENGTH)
        features = {k: tf.constant(v) if isinstance(v, int) else v for k, v in features.items()}
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            result = predict.infer(features, EXTRA_LENGTH, 1, 1, 0.0)
        fetch = {"greedy_ids": result["outputs"], "greedy_scores": result["scores"]}
        return _HELPERS["relative"].restored_run(tf, train_dir, fetch)


def write(out_dir, relative_reference, packed_reference):
    """Writes ``FOLDER/REFERENCE``; returns its arrays' shapes and, per case, T2T's largest
    logit difference from its control (``base`` or ``lm_base``). The two modules: the
    companions named above."""
    _HELPERS.update(relative=relative_reference, packed=packed_reference)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib

    packed = _HELPERS["packed"]
    inputs = packed.padded(np, INPUTS, INPUT_LENGTH)
    arrays = {
        "inputs": inputs,
        "targets": packed.padded(np, TARGETS, TARGET_LENGTH),
        "lm_targets": packed.padded(np, LM_TARGETS, len(LM_TARGETS[0])),
        "lm_prompt": np.asarray(LM_PROMPT, np.int32),
        "extra_length": np.asarray(EXTRA_LENGTH),
    }
    for key, rel_dir in TRAIN_DIRS.items():
        arrays[f"{key}_train_dir"] = np.asarray(rel_dir)
        sha256 = packed.checkpoint_sha256(os.path.join(out_dir, rel_dir))
        arrays[f"{key}_sha256"] = np.asarray(sha256)
    for case, (key, overrides, as_rows) in CASES.items():
        train_dir = os.path.join(out_dir, TRAIN_DIRS[key])
        problem = packed.problem_hparams(hparam, modalities, key == "seq2seq")
        hparams = case_hparams(transformer, hparams_lib, train_dir, overrides, problem)
        arrays[f"{case}_hparams"] = np.asarray(overrides)
        if key == "seq2seq":
            features, prompt = {"inputs": inputs, "targets": arrays["targets"]}, inputs
        else:  # a batch of one prompt, as lm_reference.py decodes
            features, prompt = {"targets": arrays["lm_targets"]}, arrays["lm_prompt"][None]
        if as_rows:  # T2T does not decode packed features (_fast_decode raises)
            features = packed_as_rows(np, features)
        args = (tf, transformer, hparams, problem, train_dir)
        values = attempt(eval_values, *args, features)
        if not as_rows:
            greedy = attempt(greedy_values, *args, prompt)
            values.update({f"greedy_{k}" if k == "error" else k: v for k, v in greedy.items()})
        for name, value in values.items():
            value = np.asarray(value)
            floating = value.dtype.kind == "f"
            arrays[f"{case}_{name}"] = value.astype(np.float32) if floating else value
    for case, control in (("noncausal", "base"), ("all", "prox_uni")):
        for name in ("greedy_ids", "greedy_scores"):  # _fast_decode's bias is causal anyway
            assert np.array_equal(arrays[f"{case}_{name}"], arrays[f"{control}_{name}"]), case
    os.makedirs(os.path.join(out_dir, FOLDER), exist_ok=True)
    np.savez_compressed(os.path.join(out_dir, FOLDER, REFERENCE), **arrays)
    real = arrays["targets"] != 0  # T2T's packed rows are its unpacked batch there
    packing = float(np.abs(arrays["base_packed_logits"] - arrays["base_logits"])[real].max())
    assert packing < 1e-5, packing
    report = {"base_packed vs base (real targets)": packing}
    for case, (key, _, as_rows) in CASES.items():
        control = f"{'lm_' * (key == 'lm')}base{'_packed' * as_rows}_logits"
        if f"{case}_error" in arrays:
            report[case] = str(arrays[f"{case}_error"])
        else:
            report[case] = float(np.abs(arrays[f"{case}_logits"] - arrays[control]).max())
    return {k: v.shape for k, v in arrays.items()}, report
