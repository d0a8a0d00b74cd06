"""A tiny T2T 1.15.7 language model (a problem without inputs) and T2T's outputs on it.

Companion of ``make_t2t_reference.py`` (``--only=lm``), run in T2T's virtualenv after the shim is
installed. T2T's ``Transformer`` with problem hparams that have no ``inputs`` modality
(``T2TModel.has_input`` false, as for a ``Text2SelfProblem``): the decoder alone, no encoder,
no encoder-decoder attention. ``transformer_tiny`` (T2T 1.15's pre-norm sets) at hidden 16,
filter 32, 2 heads, 2 layers, one shared embedding of 13 rows in 2 shards; T2T's random init and
300 Adam steps (lr 0.02, scope ``training``) on counting sequences (each token the previous + 1,
wrapping from 12 to 2, then EOS), so that a decode continues its prompt. Then, from that
checkpoint read back: EVAL logits on fixed targets, and T2T's ``infer`` with each prompt as
``inputs`` (``decoding.py`` gives a line's ids there, without EOS) one prompt per batch: greedy,
beam-3 top and beam-3 all beams (``_fast_decode``, the partial targets forced), with scores.
"""

import os

TRAIN_DIR = "t2t_lm_train_dir"
REFERENCE = "t2t_1.15.7_lm_decodes.npz"
EXTRA_LENGTH = 6
BEAM_SIZE = 3
ALPHA = 0.6
VOCAB = 13
TRAIN_STEPS = 300
LEARNING_RATE = 0.02
PROMPTS = ((5, 6, 7), (11,), (3, 4, 5, 6, 7))


def tiny_lm_hparams(transformer):
    """T2T's transformer_tiny, made tinier (the sizes above)."""
    hparams = transformer.transformer_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.symbol_modality_num_shards = 2
    return hparams


def lm_problem_hparams(hparam, modalities):
    """A Text2SelfProblem's problem hparams (``text_problems.py``): targets only."""
    return hparam.HParams(
        modality={"targets": modalities.ModalityType.SYMBOL},
        vocab_size={"targets": VOCAB},
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=True,
        was_reversed=False,
        was_copy=False,
    )


def counting_batch(np, rng, size=16):
    """Counting sequences of 3-8 tokens (2..12, wrapping), EOS, PAD after."""
    lengths = rng.integers(3, 9, size=size)
    tgt = np.zeros([size, 9, 1, 1], np.int32)
    for row, n in enumerate(lengths):
        start = rng.integers(2, VOCAB)
        tokens = [2 + (start - 2 + k) % (VOCAB - 2) for k in range(n)]
        tgt[row, : n + 1, 0, 0] = [*tokens, 1]
    return tgt


def fixed_targets(np):
    """Targets of 7 positions, one padded, not all counting (the logits see any ids)."""
    rng = np.random.default_rng(17)
    targets = rng.integers(2, VOCAB, size=[3, 7]).astype(np.int32)
    targets[0, 6] = 1
    targets[1, 4:] = [1, 0, 0]
    targets[2] = [4, 5, 6, 7, 8, 9, 1]
    return targets


def restored_run(tf, train_dir, fetch):
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer/")]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def write(out_dir, problem_hparams):
    """Writes ``TRAIN_DIR`` (model.ckpt-300, checkpoint, hparams.json, flags.txt) and
    ``REFERENCE`` under ``out_dir``; returns the train dir's files and the arrays' shapes."""
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.models import transformer

    train_dir = os.path.join(out_dir, TRAIN_DIR)
    os.makedirs(train_dir, exist_ok=True)
    hparams = tiny_lm_hparams(transformer)
    hparams.problem_hparams = problem_hparams
    targets = fixed_targets(np)
    modes = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(7)
        batch = tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1])
        model = transformer.Transformer(hparams, modes.TRAIN, problem_hparams)
        assert not model.has_input
        _, losses = model({"targets": batch, "target_space_id": tf.constant(0, tf.int32)})
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
                sess.run(train_op, {batch: counting_batch(np, rng)})
            tf.compat.v1.train.Saver(save_relative_paths=True).save(
                sess,
                os.path.join(train_dir, "model.ckpt"),
                global_step=global_step,
                write_meta_graph=False,
            )
    values = {}
    with tf.Graph().as_default():  # What the saved model computes, read back from disk.
        features = {
            "targets": tf.constant(targets[:, :, None, None]),
            "target_space_id": tf.constant(0, tf.int32),
        }
        logits, _ = transformer.Transformer(hparams, modes.EVAL, problem_hparams)(features)
        values.update(restored_run(tf, train_dir, {"logits": logits}))
    with tf.Graph().as_default():
        predict = transformer.Transformer(hparams, modes.PREDICT, problem_hparams)
        fetch = {}
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            for p, prompt in enumerate(PROMPTS):
                for name, beam, top in (
                    ("greedy", 1, 1),
                    ("beam3", BEAM_SIZE, 1),
                    ("beam3_all", BEAM_SIZE, BEAM_SIZE),
                ):
                    # decoding.py, _decode_input_tensor_to_features_dict: the line's ids as
                    # "inputs" [1, P, 1], decode_length extra_length.
                    infer_features = {
                        "inputs": tf.constant([list(prompt)], tf.int32)[:, :, None],
                        "target_space_id": tf.constant(0),
                        "decode_length": tf.constant(EXTRA_LENGTH),
                    }
                    result = predict.infer(infer_features, EXTRA_LENGTH, beam, top, ALPHA)
                    fetch[f"prompt{p}_{name}_ids"] = result["outputs"]
                    fetch[f"prompt{p}_{name}_scores"] = result["scores"]
        values.update(restored_run(tf, train_dir, fetch))
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            "--model=transformer\n--hparams_set=transformer_tiny\n--hparams=\n"
            "--problem=tiny_unregistered_lm_problem\n--train_steps=300\n"
        )
    arrays = {"targets": targets}
    arrays["logits"] = values.pop("logits").reshape([*targets.shape, VOCAB]).astype(np.float32)
    arrays.update(values)
    for p, prompt in enumerate(PROMPTS):
        arrays[f"prompt{p}"] = np.asarray(prompt, np.int32)
    np.savez_compressed(
        os.path.join(out_dir, REFERENCE),
        **arrays,
        extra_length=EXTRA_LENGTH,
        beam_size=BEAM_SIZE,
        alpha=ALPHA,
        num_prompts=len(PROMPTS),
    )
    return sorted(os.listdir(train_dir)), {k: v.shape for k, v in arrays.items()}
