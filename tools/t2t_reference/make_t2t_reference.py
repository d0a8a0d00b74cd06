"""Computes tensor2tensor 1.15.7's own outputs on its test checkpoint (reference test data).

Runs the real T2T 1.15.7 ``transformer`` (graph mode, TF1 variables restored with
``tf.compat.v1.train.Saver``) on ``../shared/data/t2t/transformer_test_ckpt`` and writes, for a
few English sentences encoded with ``vocab.translate_ende_wmt8k.8192.subwords``:

* ``encoder_output``: the encoder stack's output [B, Ls, d] (PAD positions included, which is
  where T2T's pad remover shows);
* ``logits``: teacher-forced logits [B, Lt, V] (EVAL mode: no dropout);
* greedy, beam-4 (top 1) and beam-4 (all beams, ``return_beams``) decodes and scores;
* ``beam_search_table.npz``: T2T's ``utils/beam_search.py`` run on a random second-order
  log-prob table with ``stop_early`` True and False (what ``top_beams == 1`` and
  ``return_beams`` give), on a table where the two differ;
* a tiny relative-attention train dir made by T2T and its outputs (``relative_reference.py``;
  ``--only=relative`` makes only these, without the test checkpoint), and one with learned
  positions (``pos=emb``: ``learned_positions_reference.py``, ``--only=learned_positions``);
* a tiny language model (no inputs) made by T2T and its outputs, decodes from prompts included
  (``lm_reference.py``; ``--only=lm`` makes only these);
* a tiny text classifier (``transformer_encoder``, a class label) made by T2T and its logits
  and labels (``classifier_reference.py``; ``--only=classifier`` makes only these), and the
  same with a MULTI_LABEL target (``--only=multilabel``);
* T2T's logits on packed batches (``packed_reference.py``; ``--only=packed``, after the above),
  with three attention-bias hparams set (``knobs_reference.py``; ``--only=knobs``, after it),
  T2T's scheduled sampling (``scheduled_sampling_reference.py``; ``--only=sched``, after it too)
  and hard attention (``hard_attention_reference.py``; ``--only=hard``, after it too).

It must run in a virtualenv of its own with T2T 1.15.7, never in the project's (see README.md
here). Usage::

    /work/t2tvenv/bin/python tools/t2t_reference/make_t2t_reference.py \
        --shim=../shared/t2t_shim --t2t_dir=../shared/data/t2t/transformer_test_ckpt \
        --vocab=../shared/data/t2t/vocab.translate_ende_wmt8k.8192.subwords \
        --out=tests/data/t2t_reference
"""

import argparse
import importlib.util
import json
import os
import sys
from functools import partial

# The repository root: the companion modules import as tools.t2t_reference.* (main puts it first)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SOURCES = [
    "The cat sat on the mat.",
    "Hello world",
    "We have a nice house in the country and a small garden.",
]
TARGETS = [
    "Die Katze sass auf der Matte.",
    "Hallo Welt",
    "Wir haben ein schoenes Haus auf dem Land.",
]
EXTRA_LENGTH = 12
BEAM_SIZE = 4
ALPHA = 0.6


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--t2t_dir", help="T2T train dir (model.ckpt-N); not for --only=relative")
    parser.add_argument("--vocab", help="the subword vocabulary file; not for --only=relative")
    parser.add_argument("--out", required=True, help="output folder for the .npz/.json")
    parser.add_argument(
        "--only",
        choices=["all", *COMPANIONS],
        default="all",
        help="one companion reference and its train dir only (the docstring says which)",
    )
    args = parser.parse_args()
    if args.only == "all" and not (args.t2t_dir and args.vocab):
        parser.error("--t2t_dir and --vocab are needed (all but --only=relative)")
    return args


def relative_reference(out_dir, learned_positions=False):
    """The companion modules' train dir and T2T outputs: relative self-attention, or with
    ``learned_positions`` T2T's pos=emb (``learned_positions_reference.py``), trained alike."""
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam

    import tools.t2t_reference.learned_positions_reference as emb
    from tools.t2t_reference.relative_reference import VOCAB, write, write_trained

    problem = symbol_problem_hparams(hparam, modalities, VOCAB, VOCAB)
    if not learned_positions:
        return write(out_dir, problem)
    hp = emb.tiny_learned_positions_hparams(transformer)
    return write_trained(out_dir, problem, hp, emb.TRAIN_DIR, emb.REFERENCE, "transformer_tiny")


def lm_reference(out_dir):
    """The companion module's language-model train dir and T2T outputs (no inputs)."""
    from tensor2tensor.layers import modalities
    from tensor2tensor.utils import hparam

    from tools.t2t_reference.lm_reference import lm_problem_hparams, write

    return write(out_dir, lm_problem_hparams(hparam, modalities))


def classifier_reference(out_dir, multi_label=False):
    """The companion module's text-classifier train dir and T2T outputs (a class label, or a
    MULTI_LABEL target's label lists)."""
    from tensor2tensor.layers import modalities
    from tensor2tensor.utils import hparam

    from tools.t2t_reference.classifier_reference import classifier_problem_hparams, write

    return write(out_dir, classifier_problem_hparams(hparam, modalities, multi_label), multi_label)


def padded(rows):
    import numpy as np

    out = np.zeros([len(rows), max(map(len, rows))], np.int32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def table_beam_search(tf, np, beam_search, table, beam, alpha, decode_length, stop_early):
    """T2T's beam search where logits[b, i] = table[b, i, prev2, prev] (prev2 = 0 at i = 0)."""
    batch = table.shape[0]
    table_t = tf.constant(table)

    def symbols_to_logits_fn(ids, i, states):
        with_pad = tf.pad(ids, [[0, 0], [1, 0]])
        index = tf.stack(
            [states["batch"], tf.fill(tf.shape(ids)[:1], i), with_pad[:, -2], ids[:, -1]], axis=1
        )
        return tf.gather_nd(table_t, index), states

    ids, scores = beam_search.beam_search(  # 1.15.7 returns (ids, scores, states).
        symbols_to_logits_fn,
        tf.zeros([batch], tf.int32),
        beam,
        decode_length,
        table.shape[-1],
        alpha,
        states={"batch": tf.range(batch)},
        stop_early=stop_early,
    )[:2]
    with tf.compat.v1.Session() as sess:
        return sess.run([ids, scores])


def make_table(np, seed, batch, steps, vocab):
    """Random log-probs; EOS (1) likelier with the step, so hypotheses end at varied times."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=[batch, steps, vocab, vocab, vocab]).astype(np.float32) * 2.0
    logits[..., 1] += 0.6 * np.arange(steps, dtype=np.float32)[None, :, None, None] - 2.0
    return (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)


def stop_early_reference(out_dir):
    """Finds a table where stop_early matters and saves T2T's two results on it."""
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.utils import beam_search

    beam, alpha, decode_length = 2, 0.6, 6
    for seed in range(200):
        table = make_table(np, seed, 2, decode_length, 5)
        with tf.Graph().as_default():
            early = table_beam_search(tf, np, beam_search, table, beam, alpha, decode_length, True)
        with tf.Graph().as_default():
            full = table_beam_search(tf, np, beam_search, table, beam, alpha, decode_length, False)
        if not np.array_equal(early[1], full[1]):  # Different hypotheses, not only steps.
            break
    np.savez_compressed(
        os.path.join(out_dir, "t2t_1.15.7_beam_search_table.npz"),
        table=table,
        seed=seed,
        beam_size=beam,
        alpha=alpha,
        decode_length=decode_length,
        stop_early_ids=early[0],
        stop_early_scores=early[1],
        no_stop_early_ids=full[0],
        no_stop_early_scores=full[1],
    )
    return seed, early[0].shape, full[0].shape


def symbol_problem_hparams(hparam, modalities, input_vocab, target_vocab):
    """The problem hparams T2T's text problems give (symbol modalities, target space 0)."""
    return hparam.HParams(
        modality={
            "inputs": modalities.ModalityType.SYMBOL,
            "targets": modalities.ModalityType.SYMBOL,
        },
        vocab_size={"inputs": input_vocab, "targets": target_vocab},
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=True,
        was_reversed=False,
        was_copy=False,
    )


def postnorm_checkpoint(out_dir):
    """A tiny T2T 1.15.7 train dir in the paper's layout (v1 post-norm, unshared embeddings).

    ``transformer_base_v1`` at hidden 8, filter 12, 2 heads, 2 layers, input vocab 11, target
    vocab 13, 3 embedding shards; T2T's random init, then one Adam step (scope ``training``,
    as T2T's checkpoints name the slots) on T2T's own loss so the slots are not zero.
    Writes model.ckpt-1, checkpoint, hparams.json (``HParams.to_json``, every hparam) and
    flags.txt, plus the model's EVAL logits on fixed ids after the step.
    """
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam

    train_dir = os.path.join(out_dir, "t2t_postnorm_train_dir")
    os.makedirs(train_dir, exist_ok=True)
    hparams = transformer.transformer_base_v1()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 8, 12, 2
    hparams.num_hidden_layers = 2
    hparams.shared_embedding_and_softmax_weights = False
    hparams.symbol_modality_num_shards = 3
    problem_hparams = symbol_problem_hparams(hparam, modalities, 11, 13)
    rng = np.random.default_rng(7)
    inputs = rng.integers(2, 11, size=[2, 5]).astype(np.int32)
    inputs[1, 3:] = [1, 0]
    inputs[0, 4] = 1
    targets = rng.integers(2, 13, size=[2, 4]).astype(np.int32)
    targets[:, 3] = 1
    as4d = lambda a: tf.constant(a[:, :, None, None])  # noqa: E731
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(1)
        features = {
            "inputs": as4d(inputs),
            "targets": as4d(targets),
            "target_space_id": tf.constant(0, tf.int32),
        }
        hparams.problem_hparams = problem_hparams
        train_model = transformer.Transformer(hparams, tf.estimator.ModeKeys.TRAIN, problem_hparams)
        _, losses = train_model(features)
        global_step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.variable_scope("training"):
            optimizer = tf.compat.v1.train.AdamOptimizer(
                0.01,
                hparams.optimizer_adam_beta1,
                hparams.optimizer_adam_beta2,
                hparams.optimizer_adam_epsilon,
            )
            train_op = optimizer.minimize(losses["training"], global_step=global_step)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
            tf.compat.v1.train.Saver(save_relative_paths=True).save(
                sess,
                os.path.join(train_dir, "model.ckpt"),
                global_step=global_step,
                write_meta_graph=False,
            )
    with tf.Graph().as_default():  # The logits of the saved model, read back from disk.
        features = {
            "inputs": as4d(inputs),
            "targets": as4d(targets),
            "target_space_id": tf.constant(0, tf.int32),
        }
        eval_model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem_hparams)
        logits, _ = eval_model(features)
        with tf.compat.v1.Session() as sess:
            tf.compat.v1.train.Saver().restore(sess, tf.train.latest_checkpoint(train_dir))
            values = sess.run(logits)
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            "--model=transformer\n--hparams_set=transformer_base_v1\n--hparams=\n"
            "--problem=tiny_unregistered_problem\n--train_steps=1\n"
        )
    np.savez_compressed(
        os.path.join(out_dir, "t2t_1.15.7_postnorm_logits.npz"),
        inputs=inputs,
        targets=targets,
        logits=values.reshape([2, 4, 13]).astype(np.float32),
    )
    return sorted(os.listdir(train_dir))


def main():
    args = parse_args()
    sys.path.insert(0, REPO)
    # The shim puts its own folder on the path when installed (t2t_compat.install).
    spec = importlib.util.spec_from_file_location(
        "t2t_compat", os.path.join(os.path.abspath(args.shim), "t2t_compat.py")
    )
    t2t_compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t2t_compat)
    t2t_compat.install()
    import numpy as np
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()
    if args.only != "all":
        label, run = COMPANIONS[args.only]
        return print(f"{label}:", run(args.out))
    import tensor2tensor
    from tensor2tensor.data_generators import text_encoder
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib

    # T2T 1.15.7's t2t-trainer/decoder: the registered set, then the saved hparams.json.
    flags = dict(
        line.strip()[2:].split("=", 1)
        for line in open(os.path.join(args.t2t_dir, "flags.txt"))
        if "=" in line
    )
    hparams = getattr(transformer, flags["hparams_set"])()
    hparams = hparams_lib.create_hparams_from_json(
        os.path.join(args.t2t_dir, "hparams.json"), hparams
    )
    encoder = text_encoder.SubwordTextEncoder(args.vocab)
    vocab_size = encoder.vocab_size
    # The problem's hparams as translate_ende_wmt8k gives them (symbol modalities, space 0);
    # built by hand so that the data-generator modules (and their downloads) are not needed.
    problem_hparams = symbol_problem_hparams(hparam, modalities, vocab_size, vocab_size)
    hparams.problem_hparams = problem_hparams

    inputs = padded([encoder.encode(s) + [text_encoder.EOS_ID] for s in SOURCES])
    targets = padded([encoder.encode(s) + [text_encoder.EOS_ID] for s in TARGETS])
    as4d = lambda a: tf.constant(a[:, :, None, None])  # noqa: E731
    features = {
        "inputs": as4d(inputs),
        "targets": as4d(targets),
        "target_space_id": tf.constant(0, tf.int32),
    }

    eval_model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem_hparams)
    captured, encode = {}, eval_model.encode

    def capturing_encode(*a, **kw):  # Keeps T2T's encoder output (Transformer.encode).
        out = encode(*a, **kw)
        captured["encoder_output"] = out[0]
        return out

    eval_model.encode = capturing_encode
    logits, _ = eval_model(features)
    predict_model = transformer.Transformer(hparams, tf.estimator.ModeKeys.PREDICT, problem_hparams)
    infer_features = {"inputs": as4d(inputs), "target_space_id": tf.constant(0, tf.int32)}
    decodes = {}
    with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=True):
        for name, beam, top in (
            ("greedy", 1, 1),
            ("beam4", BEAM_SIZE, 1),
            ("beam4_all", BEAM_SIZE, BEAM_SIZE),
        ):
            decodes[name] = predict_model.infer(
                dict(infer_features), EXTRA_LENGTH, beam, top, ALPHA
            )

    prefix = tf.train.latest_checkpoint(args.t2t_dir)
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith("transformer/")]
    saver = tf.compat.v1.train.Saver(model_vars)
    with tf.compat.v1.Session() as sess:
        saver.restore(sess, prefix)
        fetch = {
            "logits": logits,
            "encoder_output": captured["encoder_output"],
            **{f"{k}_ids": v["outputs"] for k, v in decodes.items()},
            **{
                f"{k}_scores": v["scores"]
                for k, v in decodes.items()
                if v.get("scores") is not None
            },
        }
        values = sess.run(fetch)

    os.makedirs(args.out, exist_ok=True)
    arrays = {
        "inputs": inputs,
        "targets": targets,
        "logits": values["logits"]
        .reshape([targets.shape[0], targets.shape[1], vocab_size])
        .astype(np.float32),
        "encoder_output": values["encoder_output"].astype(np.float32),
    }
    for k, v in values.items():
        if k.endswith("_ids") or k.endswith("_scores"):
            arrays[k] = v
    np.savez_compressed(os.path.join(args.out, "t2t_1.15.7_transformer_test.npz"), **arrays)
    meta = {
        "tensor2tensor": getattr(tensor2tensor, "__version__", "1.15.7"),
        "tensorflow": tf.__version__,
        "checkpoint": os.path.basename(prefix),
        "hparams_set": flags["hparams_set"],
        "sources": SOURCES,
        "targets": TARGETS,
        "extra_length": EXTRA_LENGTH,
        "beam_size": BEAM_SIZE,
        "alpha": ALPHA,
        "target_space_id": 0,
        "arrays": {k: list(v.shape) for k, v in arrays.items()},
    }
    with open(os.path.join(args.out, "t2t_1.15.7_transformer_test.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print(json.dumps(meta["arrays"]))
    print("post-norm train dir:", postnorm_checkpoint(args.out))
    seed, early, late = stop_early_reference(args.out)
    print(f"stop_early table: seed {seed}, ids {early} (stop early) vs {late} (not)")
    for name, (label, run) in COMPANIONS.items():
        if name not in ("knobs", "sched", "hard"):  # (they read the packed one's train dir)
            print(f"{label}:", run(args.out))


def packed_reference(out_dir, only="packed"):
    """The companion's logits on packed batches (it reads the train dirs above), or with ``only``
    "knobs"/"sched"/"hard" knobs_/scheduled_sampling_/hard_attention_reference.py's (on them)."""
    import tools.t2t_reference.hard_attention_reference as hard
    import tools.t2t_reference.knobs_reference as knobs
    import tools.t2t_reference.packed_reference as packed
    import tools.t2t_reference.relative_reference as relative
    import tools.t2t_reference.scheduled_sampling_reference as sched

    helpers = {"sched": (packed,), "packed": (relative,)}.get(only, (relative, packed))
    module = {"knobs": knobs, "sched": sched, "hard": hard, "packed": packed}[only]
    return module.write(out_dir, *helpers)


# --only name -> (label, call on the output folder) of each companion, in the full run's order
COMPANIONS = {
    "relative": ("relative train dir", relative_reference),
    "learned_positions": ("pos=emb train dir", partial(relative_reference, learned_positions=True)),
    "lm": ("language-model train dir", lm_reference),
    "classifier": ("classifier train dir", classifier_reference),
    "multilabel": ("multi-label train dir", partial(classifier_reference, multi_label=True)),
    "packed": ("packed logits", packed_reference),
    "knobs": ("knobs logits", partial(packed_reference, only="knobs")),
    "sched": ("scheduled sampling", partial(packed_reference, only="sched")),
    "hard": ("hard attention", partial(packed_reference, only="hard")),
}

if __name__ == "__main__":
    main()
