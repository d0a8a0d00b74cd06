"""T2T 1.15.7's Transformer with ``attention_variables_3d=True``: tiny train dirs made by T2T
and what T2T computes with them (reference data for ``tests/test_attention_variables_3d.py``).

What T2T does with the hparam (under ``tensor2tensor/``):

* ``layers/common_attention.py, compute_attention_component`` with ``vars_3d_num_heads`` > 0:
  the query, key and value are variables ``q``, ``k``, ``v`` (no ``/kernel``) of shape
  [input_depth, heads, depth / heads], drawn by their own ``tf.random_normal_initializer``
  (not truncated) of deviation ``input_depth ** -0.5``, times ``depth_per_head ** -0.5`` for
  ``q``; each is reshaped to [input_depth, depth] for the product (``tensordot``).
* ``multihead_attention`` with ``vars_3d``: no ``q *= depth_per_head ** -0.5`` at run time
  (the scale is q's draw), and the output is ``o`` [heads, depth / heads, output_depth] with
  no initializer of its own: the model's default (``utils/optimize.py,
  get_variable_initializer``; ``transformer_tiny``'s ``uniform_unit_scaling`` is a
  variance-scaling ``fan_avg`` draw, whose fans are the 3-D shape's: heads * depth_per_head
  in, heads * output_depth out), reshaped to [depth, output_depth].
* ``layers/transformer_layers.py, transformer_encoder`` and ``models/transformer.py,
  transformer_decoder_layer`` pass ``vars_3d=hparams.get("attention_variables_3d")`` to every
  ``multihead_attention``: self-attention of both stacks (``dot_product_relative`` too) and
  encoder-decoder attention; ``_init_transformer_cache`` (``_fast_decode``) computes the
  encoder-decoder keys and values with the same 3-D ``k`` and ``v``.

Cases (``CASES``): ``dot`` is ``transformer_tiny``, ``relative`` is
``transformer_relative_tiny`` (``max_relative_position=3``, ``pos=None``), both at hidden 16,
filter 32, 2 heads, 2 layers, one shared embedding of 13 rows in 2 shards, with
``attention_variables_3d=True``: T2T's random init and ``TRAIN_STEPS`` Adam steps (lr 0.02,
scope ``training``) on reversing random sequences, saved as T2T saves (``<case>_train_dir``);
read back from it: EVAL logits on fixed ids (sources of 7 positions, one padded; targets of
6) and T2T's greedy ``infer`` (``extra_length`` ``EXTRA_LENGTH``; ``dot``: the cached
``_fast_decode``, with scores; ``relative``: ``_slow_greedy_infer``, no scores, decoding on
past EOS). ``init``: a fresh T2T model (seed 1) at hidden 64, 4 heads, 2 layers, per kind of
variable (``q``, ``k``, ``v``, ``o``: 6 attentions each) the count, mean, deviation and
largest magnitude of T2T's draws. In T2T's virtualenv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_attention_3d_reference.py \\
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_reference/attention_3d
"""

import argparse
import json
import os
import sys
import time

REFERENCE = "t2t_1.15.7_attention_3d.npz"
CASES = {"dot": "transformer_tiny", "relative": "transformer_relative_tiny"}
VOCAB = 13
TRAIN_STEPS = 200
LEARNING_RATE = 0.02
EXTRA_LENGTH = 6
KINDS = ("q", "k", "v", "o")


def case_hparams(transformer, hparams_set, hidden=16, heads=2):
    hparams = getattr(transformer, hparams_set)()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = hidden, 32, heads
    hparams.num_hidden_layers = 2
    hparams.symbol_modality_num_shards = 2
    hparams.attention_variables_3d = True
    if hparams.self_attention_type == "dot_product_relative":
        hparams.max_relative_position = 3
    return hparams


def problem_hparams(hparam, modalities):
    """A text problem's hparams (symbol modalities, target space 0), built by hand."""
    return hparam.HParams(
        modality={s: modalities.ModalityType.SYMBOL for s in ("inputs", "targets")},
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
    """Random sources of 2-6 tokens and their reversal, EOS, PAD after: [B, 7, 1, 1] each."""
    src, tgt = np.zeros([2, size, 7, 1, 1], np.int32)
    for row, n in enumerate(rng.integers(2, 7, size=size)):
        tokens = rng.integers(2, VOCAB, size=n)
        src[row, : n + 1, 0, 0] = [*tokens, 1]
        tgt[row, : n + 1, 0, 0] = [*tokens[::-1], 1]
    return src, tgt


def fixed_ids(np):
    rng = np.random.default_rng(11)
    inputs = rng.integers(2, VOCAB, size=[3, 7]).astype(np.int32)
    inputs[:, 6] = 1
    inputs[1, 4:] = [1, 0, 0]
    targets = rng.integers(2, VOCAB, size=[3, 6]).astype(np.int32)
    targets[:, 5] = 1
    return inputs, targets


def restored_run(tf, train_dir, fetch):
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer/")]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def train(np, tf, transformer, hparams, problem, train_dir):
    """T2T's random init and TRAIN_STEPS Adam steps, saved as T2T saves; returns the names
    and shapes of the saved attention variables."""
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(5)
        batch = {s: tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1]) for s in ("i", "t")}
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.TRAIN, problem)
        features = {"inputs": batch["i"], "targets": batch["t"]}
        _, losses = model(dict(features, target_space_id=tf.constant(0, tf.int32)))
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.variable_scope("training"):
            optimizer = tf.compat.v1.train.AdamOptimizer(
                LEARNING_RATE,
                hparams.optimizer_adam_beta1,
                hparams.optimizer_adam_beta2,
                hparams.optimizer_adam_epsilon,
            )
            train_op = optimizer.minimize(losses["training"], global_step=step)
        rng = np.random.default_rng(3)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(TRAIN_STEPS):
                src, tgt = reversal_batch(np, rng)
                sess.run(train_op, {batch["i"]: src, batch["t"]: tgt})
            saver = tf.compat.v1.train.Saver(save_relative_paths=True)
            saver.save(sess, os.path.join(train_dir, "model.ckpt"), step, write_meta_graph=False)
        return {
            v.op.name: v.shape.as_list()
            for v in tf.compat.v1.global_variables()
            if "multihead_attention/" in v.op.name and not v.op.name.startswith("training/")
        }


def outputs(np, tf, transformer, hparams, problem, train_dir):
    """EVAL logits [B, L, V] and the greedy decode (ids; scores where T2T gives them)."""
    inputs, targets = fixed_ids(np)
    as4d = lambda a: tf.constant(a[:, :, None, None])  # noqa: E731
    modes = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        model = transformer.Transformer(hparams, modes.EVAL, problem)
        target_space = tf.constant(0, tf.int32)
        features = {
            "inputs": as4d(inputs),
            "targets": as4d(targets),
            "target_space_id": target_space,
        }
        logits, _ = model(features)
        values = restored_run(tf, train_dir, {"logits": logits})
    with tf.Graph().as_default():  # T2T's slow greedy calls the model as a layer
        predict = transformer.Transformer(hparams, modes.PREDICT, problem)
        scope = tf.compat.v1.get_variable_scope()
        with tf.compat.v1.variable_scope(scope, reuse=tf.compat.v1.AUTO_REUSE):
            features = {"inputs": as4d(inputs), "target_space_id": tf.constant(0)}
            result = predict.infer(features, EXTRA_LENGTH, 1, 1, 0.0)
        fetch = {"greedy_ids": result["outputs"]}
        if result.get("scores") is not None:
            fetch["greedy_scores"] = result["scores"]
        values.update(restored_run(tf, train_dir, fetch))
    values["logits"] = values["logits"].reshape([*targets.shape, VOCAB]).astype(np.float32)
    values["greedy_ids"] = np.squeeze(values["greedy_ids"]).astype(np.int32)
    return {"inputs": inputs, "targets": targets, **values}


def init_statistics(np, tf, transformer, problem):
    """Per kind of attention variable: [count, mean, deviation, max |x|] of T2T's fresh draws
    at hidden 64, 4 heads (each kind's shape too), read from T2T's initializers."""
    hparams = case_hparams(transformer, "transformer_tiny", hidden=64, heads=4)
    hparams.problem_hparams = problem
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(1)
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem)
        ids = tf.constant(np.full([1, 3, 1, 1], 2, np.int32))
        model({"inputs": ids, "targets": ids, "target_space_id": tf.constant(0)})
        kinds = {kind: [] for kind in KINDS}
        for v in tf.compat.v1.global_variables():
            kind = v.op.name.rsplit("/", 1)[-1]
            if "multihead_attention/" in v.op.name and kind in kinds:
                kinds[kind].append(v)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            drawn = sess.run(kinds)
    stats, shapes = {}, {}
    for kind, values in drawn.items():
        assert len(values) == 6, (kind, len(values))  # 2 encoder, 2 self + 2 encdec decoder
        flat = np.concatenate([v.ravel() for v in values]).astype(np.float64)
        stats[kind] = [flat.size, flat.mean(), flat.std(), np.abs(flat).max()]
        shapes[kind] = list(values[0].shape)
    return stats, shapes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the folder to write")
    args = parser.parse_args()
    sys.path.insert(0, args.shim)
    import t2t_compat

    t2t_compat.install()
    start = time.process_time()
    import numpy as np
    import tensorflow as tf

    # before T2T is imported: its layers are then tf.compat.v1's, named as in its checkpoints
    tf.compat.v1.disable_v2_behavior()
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam

    problem = problem_hparams(hparam, modalities)
    arrays = {"vocab_size": VOCAB, "extra_length": EXTRA_LENGTH, "train_steps": TRAIN_STEPS}
    report = {}
    for case, hparams_set in CASES.items():
        hparams = case_hparams(transformer, hparams_set)
        hparams.problem_hparams = problem
        train_dir = os.path.join(args.out, f"t2t_{case}_3d_train_dir")
        os.makedirs(train_dir, exist_ok=True)
        saved = train(np, tf, transformer, hparams, problem, train_dir)
        names = {name.rsplit("/", 1)[-1] for name in saved}
        assert {"q", "k", "v", "o"} <= names and "kernel" not in names, sorted(names)
        for name, values in outputs(np, tf, transformer, hparams, problem, train_dir).items():
            arrays[f"{case}_{name}"] = values
        del hparams.problem_hparams  # an object, not an hparam T2T saves
        with open(os.path.join(train_dir, "hparams.json"), "w") as f:
            f.write(hparams.to_json())
        with open(os.path.join(train_dir, "flags.txt"), "w") as f:
            f.write(
                f"--model=transformer\n--hparams_set={hparams_set}\n--hparams=\n"
                "--problem=tiny_unregistered_problem\n--train_steps=1\n"
            )
        arrays[f"{case}_train_dir"] = os.path.basename(train_dir)
        report[case] = {n: s for n, s in sorted(saved.items()) if "layer_0/" in n}
        report[f"{case} greedy"] = arrays[f"{case}_greedy_ids"].tolist()
    stats, shapes = init_statistics(np, tf, transformer, problem)
    arrays["init_kinds"] = np.asarray(KINDS)
    arrays["init_stats"] = np.asarray([stats[k] for k in KINDS], np.float64)
    arrays["init_shapes"] = np.asarray([shapes[k] for k in KINDS], np.int32)
    np.savez_compressed(os.path.join(args.out, REFERENCE), **arrays)
    report["init [count, mean, std, max|x|]"] = {k: stats[k] for k in KINDS}
    report["init shapes"] = shapes
    report["cpu seconds"] = round(time.process_time() - start, 1)
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
