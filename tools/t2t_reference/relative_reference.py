"""A tiny T2T 1.15.7 train dir with relative self-attention, and T2T's outputs on it.

Companion of ``make_t2t_reference.py`` (``--only=relative``), run in T2T's virtualenv after the
shim is installed. T2T's ``transformer_relative_tiny`` (``dot_product_relative``, ``pos=None``,
T2T 1.15's pre-norm ``transformer_base``) at hidden 16, filter 32, 2 heads, 2 layers,
``max_relative_position=3`` (so the sentences and decodes, up to 15 positions, are clipped), one
shared embedding of 13 rows in 2 shards; T2T's random init and 300 Adam steps on reversing
random sequences (so that the decodes depend on the input and its order), saved as T2T saves;
then, from that checkpoint read back: EVAL logits, greedy decodes (T2T decodes relative
attention greedily with ``_slow_greedy_infer``, the full decoder per prefix) and beam-3 decodes
(T2T's cached ``_fast_decode``), top beam and all beams. Also T2T's three relative sets'
values (``SETS_FILE``).
"""

import os

TRAIN_DIR = "t2t_relative_train_dir"
REFERENCE = "t2t_1.15.7_relative_decodes.npz"
SETS_FILE = "t2t_1.15.7_relative_hparams.json"
SETS = ("transformer_relative", "transformer_relative_tiny", "transformer_relative_big")
EXTRA_LENGTH = 8
BEAM_SIZE = 3
ALPHA = 0.6
VOCAB = 13
TRAIN_STEPS = 300  # on reversal batches, so that decodes depend on the input and its order
LEARNING_RATE = 0.02


def tiny_relative_hparams(transformer):
    """T2T's transformer_relative_tiny, made tinier (the sizes above)."""
    hparams = transformer.transformer_relative_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.max_relative_position = 3
    hparams.symbol_modality_num_shards = 2
    return hparams


def reversal_batch(np, rng, size=16):
    """Random sources of 2-6 tokens and their reversal (positions matter), EOS, PAD after."""
    lengths = rng.integers(2, 7, size=size)
    src = np.zeros([size, 7, 1, 1], np.int32)
    tgt = np.zeros([size, 7, 1, 1], np.int32)
    for row, n in enumerate(lengths):
        tokens = rng.integers(2, VOCAB, size=n)
        src[row, : n + 1, 0, 0] = [*tokens, 1]
        tgt[row, : n + 1, 0, 0] = [*tokens[::-1], 1]
    return src, tgt


def fixed_ids(np):
    """Sources of 7 positions (one padded) and targets of 6: distances up to 6 > 3."""
    rng = np.random.default_rng(11)
    inputs = rng.integers(2, VOCAB, size=[3, 7]).astype(np.int32)
    inputs[0, 6] = 1
    inputs[1, 4:] = [1, 0, 0]
    inputs[2, 6] = 1
    targets = rng.integers(2, VOCAB, size=[3, 6]).astype(np.int32)
    targets[:, 5] = 1
    return inputs, targets


def restored_run(tf, train_dir, fetch):
    """``fetch`` evaluated with the model's variables restored from ``train_dir``."""
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer/")]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def write_sets(out_dir):
    """T2T's three relative sets, every hparam (``HParams.values``), as one JSON file."""
    import json

    from tensor2tensor.models import transformer

    values = {name: getattr(transformer, name)().values() for name in SETS}
    with open(os.path.join(out_dir, SETS_FILE), "w") as f:
        json.dump(values, f, indent=1, sort_keys=True)
        f.write("\n")


def write(out_dir, problem_hparams):
    """Writes ``TRAIN_DIR`` (model.ckpt-300, checkpoint, hparams.json, flags.txt) and
    ``REFERENCE`` and ``SETS_FILE`` under ``out_dir``; returns the train dir's files."""
    write_sets(out_dir)
    from tensor2tensor.models import transformer

    hparams = tiny_relative_hparams(transformer)
    names = (TRAIN_DIR, REFERENCE, "transformer_relative_tiny")
    return write_trained(out_dir, problem_hparams, hparams, *names)


def write_trained(out_dir, problem_hparams, hparams, train_dir_name, reference, hparams_set):
    """T2T's random init of ``hparams`` and ``TRAIN_STEPS`` Adam steps on reversal batches,
    saved as T2T saves (``train_dir_name``); what the saved model computes on ``fixed_ids``
    (EVAL logits, greedy, beam-3 and beam-3 all-beams decodes) in ``reference``; the train
    dir's ``flags.txt`` names ``hparams_set``."""
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.models import transformer

    train_dir = os.path.join(out_dir, train_dir_name)
    os.makedirs(train_dir, exist_ok=True)
    hparams.problem_hparams = problem_hparams
    inputs, targets = fixed_ids(np)
    as4d = lambda a: tf.constant(a[:, :, None, None])  # noqa: E731
    features = lambda: {  # noqa: E731
        "inputs": as4d(inputs),
        "targets": as4d(targets),
        "target_space_id": tf.constant(0, tf.int32),
    }
    modes = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(5)
        batch = {
            "inputs": tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1]),
            "targets": tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1]),
        }
        model = transformer.Transformer(hparams, modes.TRAIN, problem_hparams)
        _, losses = model(dict(batch, target_space_id=tf.constant(0, tf.int32)))
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
                src, tgt = reversal_batch(np, rng)
                sess.run(train_op, {batch["inputs"]: src, batch["targets"]: tgt})
            tf.compat.v1.train.Saver(save_relative_paths=True).save(
                sess,
                os.path.join(train_dir, "model.ckpt"),
                global_step=global_step,
                write_meta_graph=False,
            )
    values = {}
    with tf.Graph().as_default():  # What the saved model computes, read back from disk.
        logits, _ = transformer.Transformer(hparams, modes.EVAL, problem_hparams)(features())
        values.update(restored_run(tf, train_dir, {"logits": logits}))
    with tf.Graph().as_default():  # Decodes in a graph of their own: T2T's slow greedy calls
        # the model as a layer, whose scope must be the checkpoint's "transformer".
        predict = transformer.Transformer(hparams, modes.PREDICT, problem_hparams)
        fetch = {}
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            for name, beam, top in (
                ("greedy", 1, 1),
                ("beam3", BEAM_SIZE, 1),
                ("beam3_all", BEAM_SIZE, BEAM_SIZE),
            ):
                infer_features = {"inputs": as4d(inputs), "target_space_id": tf.constant(0)}
                result = predict.infer(infer_features, EXTRA_LENGTH, beam, top, ALPHA)
                fetch[f"{name}_ids"] = result["outputs"]
                if result.get("scores") is not None:
                    fetch[f"{name}_scores"] = result["scores"]
        values.update(restored_run(tf, train_dir, fetch))
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            f"--model=transformer\n--hparams_set={hparams_set}\n--hparams=\n"
            "--problem=tiny_unregistered_problem\n--train_steps=1\n"
        )
    arrays = {"inputs": inputs, "targets": targets}
    arrays["logits"] = values.pop("logits").reshape([*targets.shape, VOCAB]).astype(np.float32)
    arrays.update({k: np.squeeze(v) if k == "greedy_ids" else v for k, v in values.items()})
    np.savez_compressed(
        os.path.join(out_dir, reference),
        **arrays,
        extra_length=EXTRA_LENGTH,
        beam_size=BEAM_SIZE,
        alpha=ALPHA,
    )
    return sorted(os.listdir(train_dir)), {k: v.shape for k, v in arrays.items()}
