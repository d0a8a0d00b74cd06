"""Records T2T 1.15.7's evaluation with ``eval_run_autoregressive`` (reference data).

With that hparam T2T's ``estimator_model_fn`` (``utils/t2t_model.py``) takes the EVAL logits and
losses from ``T2TModel.eval_autoregressive`` (``_slow_greedy_infer`` with ``decode_length`` 50)
instead of the teacher-forced call, and ``estimator_spec_eval`` computes the problem's metrics
of those logits against the gold targets (``utils/metrics.py``: each ``padded_*`` function
pads both with zeros to one length; the Estimator's value is ``tf.metrics.mean(values,
weights)``). This runs T2T's own code on three tiny train dirs T2T made
(``tests/data/t2t_reference``): the relative-attention seq2seq model (a batch of three rows,
and its first row alone with ``stop_at_eos`` on and off), the language model (targets only;
a one-row batch ending in EOS decodes nothing)
and the text classifier (a CLASS_LABEL target), each restored from its checkpoint, in its venv
(README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_eval_autoregressive_reference.py \
        --shim=../shared/t2t_shim --data=tests/data/t2t_reference \
        --out=tests/data/t2t_reference/t2t_1.15.7_eval_autoregressive.npz

For each case it stores the batch, T2T's logits ``[B, T, V]``, its ``losses["training"]`` and
the Estimator values (with the target modality's weights) of ``accuracy``,
``accuracy_per_sequence`` and ``neg_log_perplexity``.
"""

import argparse
import os
import re
import sys

import numpy as np

SEQ_INPUTS = [[5, 9, 3, 7, 2, 4, 1], [6, 2, 8, 1, 0, 0, 0], [3, 4, 5, 6, 7, 8, 1]]
SEQ_TARGETS = [[4, 2, 7, 3, 9, 5, 1], [8, 2, 6, 1, 0, 0, 0], [8, 7, 6, 5, 4, 3, 1]]
LM_TARGETS = [[4, 5, 6, 7, 8, 9, 1], [9, 10, 11, 1, 0, 0, 0]]
CLASS_INPUTS = [[3, 3, 3, 7, 9, 1, 0], [11, 12, 11, 11, 5, 6, 1]]
CLASS_LABELS = [[0], [2]]
# name -> (train dir, set, model class, problem kind, inputs, targets, stop_at_eos)
CASES = {
    "seq2seq": ("t2t_relative_train_dir", "transformer_relative_tiny", "Transformer", "seq2seq",
                SEQ_INPUTS, SEQ_TARGETS, True),
    "one_row_eos": ("t2t_relative_train_dir", "transformer_relative_tiny", "Transformer",
                    "seq2seq", SEQ_INPUTS[:1], SEQ_TARGETS[:1], True),
    "one_row_no_eos": ("t2t_relative_train_dir", "transformer_relative_tiny", "Transformer",
                       "seq2seq", SEQ_INPUTS[:1], SEQ_TARGETS[:1], False),
    "lm": ("t2t_lm_train_dir", "transformer_tiny", "Transformer", "lm", None, LM_TARGETS, True),
    "lm_one_row_eos": ("t2t_lm_train_dir", "transformer_tiny", "Transformer", "lm", None,
                       LM_TARGETS[:1], True),
    "classifier": ("t2t_classifier_train_dir", "transformer_tiny", "TransformerEncoder",
                   "class", CLASS_INPUTS, CLASS_LABELS, True),
}  # fmt: skip
VOCAB, CLASSES = 13, 3  # the train dirs' (relative_reference.py, lm_/classifier_reference.py)
METRICS = {
    "accuracy": "padded_accuracy",
    "accuracy_per_sequence": "padded_sequence_accuracy",
    "neg_log_perplexity": "padded_neg_log_perplexity",
}


def problem_hparams(hparam, modalities, kind, stop_at_eos):
    """Hand-made problem hparams of the three kinds (T2T's Text2Text/Self/ClassProblem's)."""
    symbol, label = modalities.ModalityType.SYMBOL, modalities.ModalityType.CLASS_LABEL
    modality = {"inputs": symbol, "targets": label if kind == "class" else symbol}
    vocab = {"inputs": VOCAB, "targets": CLASSES if kind == "class" else VOCAB}
    if kind == "lm":
        modality, vocab = {"targets": symbol}, {"targets": VOCAB}
    return hparam.HParams(
        modality=modality,
        vocab_size=vocab,
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=stop_at_eos,
        was_reversed=False,
        was_copy=False,
    )


def restore(tf, sess, train_dir):
    """Every model variable from its checkpoint name. Called inside the greedy loop (a
    ``tf.while_loop``), the shim's legacy dense layers name theirs by the name scope, under
    ``<model>/parallel_0_<n>/<model>/`` and with uniquified ``layer_<i>_<n>`` scopes: the
    same variables, named otherwise."""
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(train_dir))
    for var in tf.compat.v1.global_variables():
        name = re.sub(r"^(\w+)/parallel_0_\d+/\1/", "", var.name.split(":")[0])
        var.load(reader.get_tensor(re.sub(r"/layer_(\d+)_\d+/", r"/layer_\1/", name)), sess)


def run_case(tf, data_dir, case):
    """T2T's autoregressive EVAL of one case, read back from its train dir."""
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib, metrics

    dir_name, set_name, model_class, kind, inputs, targets, stop_at_eos = case
    train_dir = os.path.join(data_dir, dir_name)
    hparams = hparams_lib.create_hparams_from_json(
        os.path.join(train_dir, "hparams.json"), getattr(transformer, set_name)()
    )
    problem = problem_hparams(hparam, modalities, kind, stop_at_eos)
    hparams.problem_hparams = problem
    labels = np.asarray(targets, np.int32)
    with tf.Graph().as_default():
        features = {"targets": tf.constant(labels[:, :, None, None])}
        if inputs is not None:
            features["inputs"] = tf.constant(np.asarray(inputs, np.int32)[:, :, None, None])
            features["target_space_id"] = tf.constant(0, tf.int32)
        model = getattr(transformer, model_class)(hparams, tf.estimator.ModeKeys.EVAL, problem)
        logits, losses = model.eval_autoregressive(features)
        gold = features["targets"]
        fetch = {"logits": logits, "loss": losses["training"]}
        # As estimator_spec_eval's metrics (metrics.py, create_evaluation_metrics): the target
        # modality's weights_fn (a class label's weights_all), tf.metrics.mean(values, weights)
        weights_fn = modalities.get_weights_fn(problem.modality["targets"])
        for name, fn in METRICS.items():
            values, weights = getattr(metrics, fn)(logits, gold, weights_fn=weights_fn)
            weights = tf.broadcast_to(tf.cast(weights, tf.float32), tf.shape(values))
            fetch[name] = tf.reduce_sum(values * weights) / tf.reduce_sum(weights)
        with tf.compat.v1.Session() as sess:
            restore(tf, sess, train_dir)
            got = sess.run(fetch)
    logits = np.asarray(got["logits"], np.float32)
    out = {"logits": logits.reshape([logits.shape[0], logits.shape[1], logits.shape[-1]])}
    out.update({k: np.float32(got[k]) for k in ("loss", *METRICS)})
    out["targets"] = labels
    if inputs is not None:
        out["inputs"] = np.asarray(inputs, np.int32)
    out["stop_at_eos"] = np.bool_(stop_at_eos)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--data", required=True, help="tests/data/t2t_reference")
    parser.add_argument("--out", required=True, help="the .npz file to write")
    args = parser.parse_args()
    sys.path.insert(0, args.shim)
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    arrays = {}
    for name, case in CASES.items():
        for key, value in run_case(tf, args.data, case).items():
            arrays[f"{name}/{key}"] = value
        print(name, {k: arrays[f"{name}/{k}"] for k in ("loss", *METRICS)})
        print("  logits", arrays[f"{name}/logits"].shape)
    np.savez_compressed(args.out, **arrays)


if __name__ == "__main__":
    main()
