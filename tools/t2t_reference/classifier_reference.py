"""A tiny T2T 1.15.7 text classifier (``transformer_encoder``, a class-label target) and T2T's
outputs on it.

Companion of ``make_t2t_reference.py`` (``--only=classifier``), run in T2T's virtualenv after the
shim is installed. T2T's ``TransformerEncoder`` (``models/transformer.py``) with a
``Text2ClassProblem``'s problem hparams (``data_generators/text_problems.py``: SYMBOL inputs, a
CLASS_LABEL target of ``NUM_CLASSES`` classes): the encoder stack, its output averaged over every
position (``layers/modalities.py``, ``class_label_top``) and a dense layer to the classes.
``transformer_tiny`` at hidden 16, filter 32, 2 heads, 2 layers, an input embedding of 13 rows in
2 shards; T2T's random init and 200 Adam steps (lr 0.02, scope ``training``) on random
sequences whose label is the most frequent token's third (ids 2-4: 0, 5-8: 1, 9-12: 2; label 0
counts in the loss, T2T's ``weights_all``). Then, from that checkpoint read back: EVAL logits on
fixed inputs, T2T's loss of them with fixed labels (its label smoothing, every label
counted), and T2T's ``infer`` labels of them.

``multi_label=True`` (``--only=multilabel``) makes the same with a MULTI_LABEL target (a
multi-label usr_dir's problem hparams, e.g. the public Jigsaw one's): ``NUM_CLASSES`` + 1
classes, label lists padded with 0 (T2T's ``weights_nonzero``: 0 is padding), each row's labels
1 + the thirds of its first and its most frequent token; T2T's ``multi_label_loss`` trains it
and gives the EVAL loss of ``EVAL_LABEL_LISTS`` (a row without a label among them), and T2T's
``infer`` cannot decode it: the error it raises, greedy and beam search, is recorded.
"""

import os
import re

TRAIN_DIR = "t2t_classifier_train_dir"
REFERENCE = "t2t_1.15.7_classifier_logits.npz"
VOCAB = 13
NUM_CLASSES = 3
TRAIN_STEPS = 200
LEARNING_RATE = 0.02
EVAL_LABELS = (0, 1, 2, 0)  # the fixed inputs' labels for T2T's EVAL loss (class 0 counts)
MULTI_TRAIN_DIR = "t2t_multilabel_train_dir"
MULTI_REFERENCE = "t2t_1.15.7_multilabel_logits.npz"
# multi-label EVAL label lists: 0 pads; the third row has no label (T2T leaves it out)
EVAL_LABEL_LISTS = ((1, 0, 0), (2, 3, 1), (0, 0, 0), (3, 2, 0))


def tiny_classifier_hparams(transformer):
    """T2T's transformer_tiny, made tinier (the sizes above)."""
    hparams = transformer.transformer_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.symbol_modality_num_shards = 2
    return hparams


def classifier_problem_hparams(hparam, modalities, multi_label=False):
    """A Text2ClassProblem's problem hparams (``text_problems.py``, its ``hparams``); with
    ``multi_label`` a MULTI_LABEL target of ``NUM_CLASSES`` + 1 classes (0: padding)."""
    kind = modalities.ModalityType.MULTI_LABEL if multi_label else None
    return hparam.HParams(
        modality={
            "inputs": modalities.ModalityType.SYMBOL,
            "targets": kind or modalities.ModalityType.CLASS_LABEL,
        },
        vocab_size={"inputs": VOCAB, "targets": NUM_CLASSES + int(multi_label)},
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=True,
        was_reversed=False,
        was_copy=False,
    )


def label_of(np, tokens):
    counts = np.bincount(tokens, minlength=VOCAB)
    top = int(np.argmax(counts))
    return 0 if top <= 4 else 1 if top <= 8 else 2


def random_batch(np, rng, size=16, length=9, multi_label=False):
    """Sequences of 3-8 tokens, EOS, PAD after; labels from the tokens (multi-label: the list
    of 1 + the thirds of the first and the last token, padded to 2 with 0)."""
    inputs = np.zeros([size, length, 1, 1], np.int32)
    labels = np.zeros([size, 2 if multi_label else 1, 1, 1], np.int32)
    for row in range(size):
        n = int(rng.integers(3, length))
        tokens = rng.integers(2, VOCAB, size=n)
        tokens[: n // 2] = tokens[0]
        inputs[row, : n + 1, 0, 0] = [*tokens, 1]
        if multi_label:
            found = {1 + label_of(np, tokens[:1]), 1 + label_of(np, tokens[-1:])}
            labels[row, : len(found), 0, 0] = sorted(found)
        else:
            labels[row, 0, 0, 0] = label_of(np, tokens)
    return inputs, labels


def fixed_inputs(np):
    """Inputs of 7 positions, two rows padded."""
    rng = np.random.default_rng(17)
    inputs = rng.integers(2, VOCAB, size=[4, 7]).astype(np.int32)
    inputs[0, 6] = 1
    inputs[1, 4:] = [1, 0, 0]
    inputs[2] = [3, 3, 3, 7, 9, 1, 0]
    inputs[3] = [11, 12, 11, 11, 5, 6, 1]
    return inputs


def restored_run(tf, train_dir, fetch):
    model_vars = [
        v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer_encoder/")
    ]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def infer_errors(tf, model, features, train_dir):
    """What T2T's ``infer`` (``utils/t2t_model.py``) raises for a MULTI_LABEL model, greedy
    (beam_size 1) and beam search (4, T2T's default; only CLASS_LABEL gets decode_length 1):
    one line each, the exception's type and its cause's line, or "ok" and the outputs."""
    found = []
    for beams in (1, 4):
        try:
            result = model.infer(features, decode_length=50, beam_size=beams, top_beams=1)
            outputs = restored_run(tf, train_dir, result["outputs"])
            found.append(f"beam_size={beams}: ok, outputs {outputs.tolist()}")
        except Exception as e:  # noqa: BLE001  (recorded, not handled)
            # TensorFlow's first line is "Graph execution error:"; the cause is a later line
            cause = re.search(r"[^\n]*(out of bounds|Incompatible|must |Expected )[^\n]*", str(e))
            line = cause.group(0).strip() if cause else str(e).splitlines()[0]
            found.append(f"beam_size={beams}: {type(e).__name__}: {line}")
    return found


def write(out_dir, problem_hparams, multi_label=False):
    """Writes ``TRAIN_DIR`` (model.ckpt-200, checkpoint, hparams.json, flags.txt) and
    ``REFERENCE`` under ``out_dir`` (multi-label: ``MULTI_TRAIN_DIR``, ``MULTI_REFERENCE``);
    returns the train dir's files and the arrays' shapes."""
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.models import transformer

    train_dir = os.path.join(out_dir, MULTI_TRAIN_DIR if multi_label else TRAIN_DIR)
    eval_labels = np.asarray(EVAL_LABEL_LISTS if multi_label else EVAL_LABELS, np.int32)
    eval_labels = eval_labels.reshape([len(eval_labels), -1])
    os.makedirs(train_dir, exist_ok=True)
    hparams = tiny_classifier_hparams(transformer)
    hparams.problem_hparams = problem_hparams
    inputs = fixed_inputs(np)
    modes = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(7)
        batch = tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1])
        labels = tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1])
        model = transformer.TransformerEncoder(hparams, modes.TRAIN, problem_hparams)
        features = {"inputs": batch, "targets": labels, "target_space_id": tf.constant(0)}
        _, losses = model(features)
        global_step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.variable_scope("training"):
            optimizer = tf.compat.v1.train.AdamOptimizer(
                LEARNING_RATE,
                hparams.optimizer_adam_beta1,
                hparams.optimizer_adam_beta2,
                hparams.optimizer_adam_epsilon,
            )
            train_op = optimizer.minimize(losses["training"], global_step=global_step)
        rng = np.random.default_rng(3)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(TRAIN_STEPS):
                x, y = random_batch(np, rng, multi_label=multi_label)
                sess.run(train_op, {batch: x, labels: y})
            tf.compat.v1.train.Saver(save_relative_paths=True).save(
                sess,
                os.path.join(train_dir, "model.ckpt"),
                global_step=global_step,
                write_meta_graph=False,
            )
    values = {}
    with tf.Graph().as_default():  # What the saved model computes, read back from disk.
        features = {
            "inputs": tf.constant(inputs[:, :, None, None]),
            "targets": tf.constant(eval_labels)[:, :, None, None],
            "target_space_id": tf.constant(0, tf.int32),
        }
        model = transformer.TransformerEncoder(hparams, modes.EVAL, problem_hparams)
        logits, losses = model(features)
        values.update(restored_run(tf, train_dir, {"logits": logits, "loss": losses["training"]}))
    with tf.Graph().as_default():  # T2T's infer (decoding.py's path): the labels
        predict = transformer.TransformerEncoder(hparams, modes.PREDICT, problem_hparams)
        infer_features = {
            "inputs": tf.constant(inputs[:, :, None]),
            "target_space_id": tf.constant(0),
        }
        if multi_label:  # T2T's infer gives a MULTI_LABEL model no one-step decode
            values["infer_errors"] = infer_errors(tf, predict, infer_features, train_dir)
        else:
            result = predict.infer(infer_features, decode_length=50, beam_size=4, top_beams=1)
            values.update(restored_run(tf, train_dir, {"labels": result["outputs"]}))
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            "--model=transformer_encoder\n--hparams_set=transformer_tiny\n--hparams=\n"
            "--problem=tiny_unregistered_class_problem\n--train_steps=200\n"
        )
    classes = NUM_CLASSES + int(multi_label)
    arrays = {"inputs": inputs}
    arrays["logits"] = values.pop("logits").reshape([len(inputs), classes]).astype(np.float32)
    if multi_label:
        arrays["infer_errors"] = np.asarray(values.pop("infer_errors"))
        arrays["eval_labels"] = eval_labels
    else:
        arrays["labels"] = np.asarray(values.pop("labels")).reshape([len(inputs)]).astype(np.int32)
        arrays["eval_labels"] = eval_labels[:, 0]
    # T2T's loss of those labels (label smoothing of the hparams set, weights_all): the mean
    arrays["loss"] = np.float32(values.pop("loss"))
    name = MULTI_REFERENCE if multi_label else REFERENCE
    np.savez_compressed(os.path.join(out_dir, name), **arrays, num_classes=classes)
    return sorted(os.listdir(train_dir)), {k: v.shape for k, v in arrays.items()}
