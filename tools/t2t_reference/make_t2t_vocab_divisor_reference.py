"""Records T2T 1.15.7's ``vocab_divisor`` on a tiny Transformer, and what T2T 1.15.7 does with
``symbol_modality_skip_top`` (reference data; README.md here).

``vocab_divisor``: T2T rounds every vocabulary size up to a multiple of it wherever it reads one
(``utils/t2t_model.py``: ``T2TModel.__init__``, ``bottom``, ``_top_single``, ``_loss_single``;
``models/transformer.py``: ``_prepare_inputs_for_decode``, ``_fast_decode``), so the modality
scopes are ``symbol_modality_<rounded>_<d>``, the embedding shards (``layers/modalities.py``,
``get_weights``) split the rounded rows, the logits have the rounded width, the loss smooths
over it (``layers/common_layers.py``, ``padded_cross_entropy``: the logits' last dimension) and
the searches choose among it. Here: ``transformer_tiny`` at hidden 16, filter 32, 2 heads, 2
layers, input and target vocabularies of ``VOCAB`` ids rounded up by ``DIVISOR``, unshared
(``input_emb``, ``target_emb``, ``softmax``), each in ``SHARDS`` shards; T2T's random init
(graph seed ``SEED``) and ``TRAIN_STEPS`` small Adam steps (lr ``LEARNING_RATE``, scope
``training``) on reversing random sequences, saved as T2T saves. Then, read back from that
checkpoint, on fixed ids: the EVAL logits and EVAL loss (T2T's ``set_mode`` zeroes
``label_smoothing`` outside TRAIN), the TRAIN-mode loss with every dropout 0 (the training
loss, ``label_smoothing`` 0.1 over the rounded width), T2T's greedy ``infer``
(``_fast_decode``) and beam-``BEAM_SIZE`` decodes (all beams) with scores. The script fails
unless the greedy decode picks a padded id (so the reference tests what a search does with
one; the seed is the first that does).

``symbol_modality_skip_top``: T2T before 1.15 returned the body output as the logits with it
(``SymbolModality.top``); T2T 1.15.7 has no such hparam: ``common_hparams.basic_params1`` does
not define it and no module reads it. Recorded: the error of ``--hparams`` naming it
(``HParams.parse``), and the EVAL logits of the same model with a set that ``add_hparam``s it
True (asserted equal to the logits without it)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_vocab_divisor_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_reference/vocab_divisor
"""

import argparse
import os
import sys

TRAIN_DIR = "t2t_train_dir"
REFERENCE = "t2t_1.15.7_vocab_divisor.npz"
VOCAB, DIVISOR, SHARDS = 13, 8, 3  # 16 rows, in shards of 6, 5 and 5
TRAIN_STEPS = 3
SEED = 6  # the graph seed of T2T's init (one whose greedy decode picks a padded id)
LEARNING_RATE = 1e-4  # a few small steps: Adam's slots, the decodes still near T2T's init
EXTRA_LENGTH = 6
BEAM_SIZE = 3
ALPHA = 0.6
LABEL_SMOOTHING = 0.1  # transformer_tiny's
DROPOUTS = ("layer_prepostprocess_dropout", "attention_dropout", "relu_dropout")


def tiny_hparams(transformer):
    """T2T's transformer_tiny, made tinier, with the vocabulary rounded up to DIVISOR."""
    hparams = transformer.transformer_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.symbol_modality_num_shards = SHARDS
    hparams.vocab_divisor = DIVISOR
    # Three matrices (input_emb, target_emb, softmax): a tied softmax near its init favours
    # the source's ids, and so never a padded one.
    hparams.shared_embedding_and_softmax_weights = False
    assert hparams.label_smoothing == LABEL_SMOOTHING
    return hparams


def problem_hparams(hparam, modalities):
    """A text problem's hparams (symbol inputs and targets of VOCAB ids, target space 0)."""
    return hparam.HParams(
        modality={side: modalities.ModalityType.SYMBOL for side in ("inputs", "targets")},
        vocab_size={"inputs": VOCAB, "targets": VOCAB},
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=True,
        was_reversed=False,
        was_copy=False,
    )


def reversal_batch(np, rng, size=16):
    """Random sources of 2-6 ids and their reversal, EOS, PAD after: [size, 7, 1, 1] each."""
    src = np.zeros([size, 7, 1, 1], np.int32)
    tgt = np.zeros([size, 7, 1, 1], np.int32)
    for row, n in enumerate(rng.integers(2, 7, size=size)):
        tokens = rng.integers(2, VOCAB, size=n)
        src[row, : n + 1, 0, 0] = [*tokens, 1]
        tgt[row, : n + 1, 0, 0] = [*tokens[::-1], 1]
    return src, tgt


def fixed_ids(np):
    """Sources of 7 positions and targets of 6, padding in some rows."""
    rng = np.random.default_rng(11)
    inputs = rng.integers(2, VOCAB, size=[3, 7]).astype(np.int32)
    inputs[0, 6] = 1
    inputs[1, 4:] = [1, 0, 0]
    inputs[2, 6] = 1
    targets = rng.integers(2, VOCAB, size=[3, 6]).astype(np.int32)
    targets[:, 5] = 1
    targets[1, 3:] = [1, 0, 0]
    return inputs, targets


def restored_run(tf, train_dir, fetch):
    """``fetch`` evaluated with the model's variables restored from ``train_dir``."""
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer/")]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def train(np, tf, transformer, hparams, problem, train_dir):
    """T2T's random init and TRAIN_STEPS Adam steps, saved as T2T saves."""
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(SEED)
        batch = {
            side: tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1])
            for side in ("inputs", "targets")
        }
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.TRAIN, problem)
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


def logits_and_loss(tf, transformer, hparams, problem, train_dir, mode, inputs, targets):
    """The model's logits [B, L, V] and ``losses["training"]`` in ``mode``, from disk."""
    with tf.Graph().as_default():
        features = {
            "inputs": tf.constant(inputs[:, :, None, None]),
            "targets": tf.constant(targets[:, :, None, None]),
            "target_space_id": tf.constant(0, tf.int32),
        }
        logits, losses = transformer.Transformer(hparams, mode, problem)(features)
        values = restored_run(tf, train_dir, {"logits": logits, "loss": losses["training"]})
    return values["logits"].reshape([*targets.shape, -1]), values["loss"]


def decodes(tf, transformer, hparams, problem, train_dir, inputs):
    """T2T's greedy and beam-BEAM_SIZE (all beams: ``top_beams`` = ``beam_size``, T2T's
    ``return_beams``) ``infer`` of ``inputs``, with scores."""
    with tf.Graph().as_default():
        predict = transformer.Transformer(hparams, tf.estimator.ModeKeys.PREDICT, problem)
        fetch = {}
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            for name, beam, alpha in (("greedy", 1, 0.0), ("beams", BEAM_SIZE, ALPHA)):
                features = {
                    "inputs": tf.constant(inputs[:, :, None, None]),
                    "target_space_id": tf.constant(0),
                }
                result = predict.infer(features, EXTRA_LENGTH, beam, beam, alpha)
                fetch[f"{name}_ids"] = result["outputs"]
                fetch[f"{name}_scores"] = result["scores"]
        return restored_run(tf, train_dir, fetch)


def skip_top_values(np, tf, transformer, problem, train_dir, inputs, targets):
    """What T2T 1.15.7 does with symbol_modality_skip_top: --hparams' error, and the EVAL
    logits of a set that adds it True (the same logits)."""
    hparams = tiny_hparams(transformer)
    try:
        hparams.parse("symbol_modality_skip_top=true")
        error = ""
    except ValueError as e:
        error = f"{type(e).__name__}: {e}"
    hparams = tiny_hparams(transformer)
    hparams.add_hparam("symbol_modality_skip_top", True)
    hparams.problem_hparams = problem
    logits, _ = logits_and_loss(
        tf, transformer, hparams, problem, train_dir, tf.estimator.ModeKeys.EVAL, inputs, targets
    )
    return error, logits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the folder to write (made if absent)")
    args = parser.parse_args()
    sys.path.insert(0, args.shim)
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()  # T2T's graph mode, before T2T is imported
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam

    train_dir = os.path.join(args.out, TRAIN_DIR)
    os.makedirs(train_dir, exist_ok=True)
    problem = problem_hparams(hparam, modalities)
    hparams = tiny_hparams(transformer)
    hparams.problem_hparams = problem
    train(np, tf, transformer, hparams, problem, train_dir)
    inputs, targets = fixed_ids(np)
    modes = tf.estimator.ModeKeys
    run = (tf, transformer, hparams, problem, train_dir)
    logits, eval_loss = logits_and_loss(*run, modes.EVAL, inputs, targets)
    no_dropout = tiny_hparams(transformer)
    for name in DROPOUTS:
        setattr(no_dropout, name, 0.0)
    no_dropout.problem_hparams = problem
    train_logits, train_loss = logits_and_loss(
        tf, transformer, no_dropout, problem, train_dir, modes.TRAIN, inputs, targets
    )
    assert np.abs(train_logits - logits).max() < 1e-5  # no dropout: the same logits
    values = decodes(*run, inputs)
    greedy = values["greedy_ids"]
    assert (greedy >= VOCAB).any(), greedy  # the reference decodes a padded id
    error, skip_logits = skip_top_values(np, tf, transformer, problem, train_dir, inputs, targets)
    assert np.array_equal(skip_logits, logits)  # T2T 1.15.7 ignores it
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            "--model=transformer\n--hparams_set=transformer_tiny\n--hparams=\n"
            f"--problem=tiny_unregistered_problem\n--train_steps={TRAIN_STEPS}\n"
        )
    arrays = dict(
        inputs=inputs,
        targets=targets,
        logits=logits.astype(np.float32),
        eval_loss=np.float32(eval_loss),
        train_loss=np.float32(train_loss),
        greedy_ids=greedy,
        greedy_scores=values["greedy_scores"],
        beams_ids=values["beams_ids"],
        beams_scores=values["beams_scores"],
        skip_top_error=np.asarray(error),
        skip_top_logits=skip_logits.astype(np.float32),
        vocab=VOCAB,
        divisor=DIVISOR,
        shards=SHARDS,
        label_smoothing=LABEL_SMOOTHING,
        extra_length=EXTRA_LENGTH,
        beam_size=BEAM_SIZE,
        alpha=ALPHA,
    )
    np.savez_compressed(os.path.join(args.out, REFERENCE), **arrays)
    print(sorted(os.listdir(train_dir)))
    print({k: np.shape(v) for k, v in arrays.items()})
    print("greedy", greedy.tolist(), "beams", arrays["beams_ids"].tolist(), "skip_top", error)


if __name__ == "__main__":
    main()
