"""T2T 1.15.7's Transformer on packed batches, and on the same examples one at a time.

Companion of ``make_t2t_reference.py`` (``--only=packed``), run in T2T's virtualenv after the
shim is installed, after the relative, learned-positions and language-model train dirs exist
(it reads them). A packed row holds several examples: ``<side>_segmentation`` numbers them from
1 (0 for spacing and padding), ``<side>_position`` restarts at 0 in each (0 at spacing and
padding), as ``data_generators/generator_utils.py`` packs (``SequencePacker``: spacing zeros
between examples; ``pack_dataset``: none). Row 0 has 2 spacing zeros, row 1 none (T2T's
``pack_dataset`` and ``Text2TextProblem.packed_spacing``), then trailing padding; inputs and
targets rows are of different lengths, the k-th target segment the translation of the k-th
input segment. What T2T does with them (cited by file and function):

* encoder: ``layers/transformer_layers.py, transformer_prepare_encoder``: self-attention bias
  ``attention_bias_same_segment`` (no padding bias of its own: segment 0 attends to segment 0),
  the timing signal at ``inputs_position`` (``add_timing_signal_1d_given_position``) or, for
  ``pos=emb``, the table's rows gathered at it (``add_positional_embedding``); the stack's
  nonpadding is ``features_to_nonpadding`` (``models/transformer.py``), which the pad remover
  (``use_pad_remover``, on in transformer_base and every set built on it) uses;
* decoder: ``models/transformer.py, transformer_prepare_decoder``: the causal bias plus
  ``attention_bias_same_segment``, positions from ``targets_position``; encoder-decoder bias
  ``attention_bias_same_segment(targets_segmentation, inputs_segmentation)``;
* the shift right (``common_layers.shift_right_3d``) is of the whole row, across segments:
  the first target of a segment is fed the embedding of the row's previous id. After spacing
  that id is 0, which the symbol modality embeds as zeros (``modalities._symbol_bottom_simple``),
  what an example alone is fed; without spacing (row 1) it is the previous example's EOS. Since
  every later target of the segment attends to that first one, T2T's packed logits of such a
  segment, all of it, are NOT those of the example alone (3e-2 to 6 apart here). Segments
  after spacing and each row's first segment are isolated: their logits are the example's
  alone to float32 rounding (within 1.2e-6 here).

Cases, each with its T2T EVAL logits (no dropout) on the packed batch and each example's own
logits (batch of one, no packing features) placed at its packed positions (0 elsewhere):
``timing`` (a train dir of its own: ``transformer_tiny``, pos=timing, use_pad_remover, 2
layers, hidden 16, 300 Adam steps on reversal as ``relative_reference.py`` trains), ``emb``
(the learned-positions train dir: segments stay within its 5 rows, since T2T gathers them),
``lm`` (the language-model train dir, no inputs: targets_* features only) and ``relative``
(the relative-attention train dir, ``dot_product_relative``; distances up to 4 > 3, clipped).
The sha256 of each checkpoint read is kept, so a test sees a train dir made anew since.
"""

import hashlib
import os
import sys

FOLDER = "packed"  # under the --out folder (tests/data/t2t_reference)
TRAIN_DIR = "t2t_timing_train_dir"
REFERENCE = "t2t_1.15.7_packed_logits.npz"
VOCAB = 13
TRAIN_STEPS = 300
LEARNING_RATE = 0.02
# Train dirs relative to --out: the timing one made here, the others by their own options.
CASES = {
    "timing": os.path.join(FOLDER, TRAIN_DIR),
    "emb": "t2t_learned_positions_train_dir",
    "lm": "t2t_lm_train_dir",
    "relative": "t2t_relative_train_dir",
}
# Per row: the spacing, and its examples as (input ids, target ids); at most 5 ids each.
ROWS = (
    (2, (((4, 7, 9, 1), (9, 7, 1)), ((5, 1), (3, 8, 5, 1)), ((6, 2, 11, 8, 1), (12, 1)))),
    (
        0,
        (
            ((3, 10, 12, 5, 1), (5, 12, 10, 1)),
            ((8, 4, 1), (2, 4, 8, 6, 1)),
            ((12, 3, 7, 1), (7, 3, 1)),
            ((9, 1), (1,)),
        ),
    ),
)
LENGTHS = {"inputs": 16, "targets": 14}


# relative_reference.py, which make_t2t_reference.py imports and hands to ``write`` (a helper
# module serves one script: tests/test_bench_layout.py).
_RELATIVE: dict = {}


class StandIn:
    """A module's ``tf`` for the companions that patch T2T: the given names replaced, every
    other read from ``module``."""

    def __init__(self, module, **names):
        self._module = module
        self.__dict__.update(names)

    def __getattr__(self, name):
        return getattr(self._module, name)


def padded(np, rows, length):
    """``rows`` of ids as int32 [len(rows), length], padded with 0 (the companions' batches)."""
    out = np.zeros([len(rows), length], np.int32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def pack(np):
    """T2T's packed features [2, L] (int32) of ``ROWS`` at ``LENGTHS``."""
    out = {}
    for side, length in LENGTHS.items():
        ids, seg, pos = (np.zeros([len(ROWS), length], np.int32) for _ in range(3))
        for r, (spacing, examples) in enumerate(ROWS):
            start = 0
            for s, example in enumerate(examples):
                seq = example[side == "targets"]
                ids[r, start : start + len(seq)] = seq
                seg[r, start : start + len(seq)] = s + 1
                pos[r, start : start + len(seq)] = np.arange(len(seq))
                start += len(seq) + spacing
            assert start - spacing < length, (side, r)  # trailing padding in every row
        out.update({side: ids, f"{side}_segmentation": seg, f"{side}_position": pos})
    return out


def problem_hparams(hparam, modalities, has_input):
    """A text problem's hparams (symbol modalities), targets only for a language model."""
    sides = ("inputs", "targets") if has_input else ("targets",)
    return hparam.HParams(
        modality={side: modalities.ModalityType.SYMBOL for side in sides},
        vocab_size={side: VOCAB for side in sides},
        input_space_id=0,
        target_space_id=0,
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        max_expected_batch_size_per_shard=64,
        stop_at_eos=True,
        was_reversed=False,
        was_copy=False,
    )


def saved_hparams(transformer, hparams_lib, train_dir):
    """What T2T's trainer and decoder build: the set in flags.txt, then hparams.json."""
    with open(os.path.join(train_dir, "flags.txt")) as f:
        flags = dict(line.strip()[2:].split("=", 1) for line in f if "=" in line)
    hparams = getattr(transformer, flags["hparams_set"])()
    return hparams_lib.create_hparams_from_json(os.path.join(train_dir, "hparams.json"), hparams)


def checkpoint_sha256(train_dir):
    """sha256 over the latest checkpoint's files (name order), the identity of the weights."""
    with open(os.path.join(train_dir, "checkpoint")) as f:
        prefix = f.readline().split('"')[1]
    digest = hashlib.sha256()
    for name in sorted(os.listdir(train_dir)):
        if name.startswith(prefix + "."):
            with open(os.path.join(train_dir, name), "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def train_timing_dir(train_dir, problem):
    """T2T's random init of ``transformer_tiny`` (pos=timing, use_pad_remover) at the sizes of
    the relative reference and ``TRAIN_STEPS`` Adam steps on its reversal batches."""
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.models import transformer

    reversal_batch = _RELATIVE["module"].reversal_batch
    hparams = transformer.transformer_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.symbol_modality_num_shards = 2
    assert hparams.pos == "timing" and hparams.use_pad_remover
    hparams.problem_hparams = problem
    os.makedirs(train_dir, exist_ok=True)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(9)
        batch = {
            side: tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1])
            for side in ("inputs", "targets")
        }
        model = transformer.Transformer(hparams, tf.estimator.ModeKeys.TRAIN, problem)
        _, losses = model(dict(batch, target_space_id=tf.constant(0, tf.int32)))
        global_step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.variable_scope("training"):  # T2T's optimizer scope (slot names)
            optimizer = tf.compat.v1.train.AdamOptimizer(
                LEARNING_RATE,
                hparams.optimizer_adam_beta1,
                hparams.optimizer_adam_beta2,
                hparams.optimizer_adam_epsilon,
            )
            train_op = optimizer.minimize(losses["training"], global_step=global_step)
        rng = np.random.default_rng(5)
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
    del hparams.problem_hparams  # Not an hparam T2T saves (an object).
    with open(os.path.join(train_dir, "hparams.json"), "w") as f:
        f.write(hparams.to_json())
    with open(os.path.join(train_dir, "flags.txt"), "w") as f:
        f.write(
            "--model=transformer\n--hparams_set=transformer_tiny\n--hparams=\n"
            f"--problem=tiny_unregistered_problem\n--train_steps={TRAIN_STEPS}\n"
        )


def eval_logits(tf, transformer, hparams, problem, train_dir, batches):
    """T2T's EVAL logits [B, L, V] of each feature dict in ``batches`` (ids [B, L] become
    [B, L, 1, 1] as T2T's input pipeline gives them), one graph each, weights from disk."""
    restored_run = _RELATIVE["module"].restored_run
    results = []
    for features in batches:
        with tf.Graph().as_default():
            graph_features = {"target_space_id": tf.constant(0, tf.int32)}
            for key, value in features.items():
                as4d = key in ("inputs", "targets")
                graph_features[key] = tf.constant(value[:, :, None, None] if as4d else value)
            model = transformer.Transformer(hparams, tf.estimator.ModeKeys.EVAL, problem)
            logits, _ = model(graph_features)
            value = restored_run(tf, train_dir, {"logits": logits})["logits"]
        results.append(value.reshape([*features["targets"].shape, -1]))
    return results


def case_arrays(np, tf, transformer, hparams, problem, train_dir, packed, has_input):
    """The packed logits, and each example's own logits at its packed positions."""
    sides = ("inputs", "targets") if has_input else ("targets",)
    features = {k: v for k, v in packed.items() if k.split("_")[0] in sides}
    singles, places = [], []
    for r in range(packed["targets"].shape[0]):
        for s in range(1, packed["targets_segmentation"][r].max() + 1):
            single = {}
            for side in sides:
                where = packed[f"{side}_segmentation"][r] == s
                single[side] = packed[side][r][where][None]
            singles.append(single)
            places.append((r, packed["targets_segmentation"][r] == s))
    logits, *alone = eval_logits(tf, transformer, hparams, problem, train_dir, [features, *singles])
    unpacked = np.zeros_like(logits)
    for (r, where), value in zip(places, alone, strict=True):
        unpacked[r, where] = value[0]
    return logits.astype(np.float32), unpacked.astype(np.float32)


def write(out_dir, relative_reference):
    """Trains the timing train dir, then writes ``FOLDER/REFERENCE``; returns its arrays'
    shapes and, per case, T2T's largest packed-unpacked logit difference in isolated segments
    and its smallest (per position) in segments whose first target is fed another's EOS.
    ``relative_reference``: that module (its batches and restore)."""
    _RELATIVE["module"] = relative_reference
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib

    train_timing_dir(
        os.path.join(out_dir, CASES["timing"]), problem_hparams(hparam, modalities, True)
    )
    packed = pack(np)
    arrays = dict(packed, spacing=np.asarray([spacing for spacing, _ in ROWS], np.int32))
    seg = packed["targets_segmentation"]
    crossing = np.zeros_like(seg, bool)  # a first target right after another example's id
    crossing[:, 1:] = (seg[:, 1:] > 0) & (seg[:, :-1] > 0) & (seg[:, 1:] != seg[:, :-1])
    fed_other = np.zeros_like(crossing)  # every target of such a segment
    for r, s in zip(*np.nonzero(crossing), strict=True):
        fed_other[r] |= seg[r] == seg[r, s]
    report = {}
    for case, rel_dir in CASES.items():
        train_dir = os.path.join(out_dir, rel_dir)
        hparams = saved_hparams(transformer, hparams_lib, train_dir)
        has_input = case != "lm"
        problem = problem_hparams(hparam, modalities, has_input)
        hparams.problem_hparams = problem
        logits, unpacked = case_arrays(
            np, tf, transformer, hparams, problem, train_dir, packed, has_input
        )
        arrays[f"{case}_logits"], arrays[f"{case}_unpacked_logits"] = logits, unpacked
        arrays[f"{case}_train_dir"] = np.asarray(rel_dir)
        arrays[f"{case}_sha256"] = np.asarray(checkpoint_sha256(train_dir))
        diff = np.abs(logits - unpacked).max(-1)
        report[case] = (float(diff[(seg > 0) & ~fed_other].max()), float(diff[fed_other].min()))
    np.savez_compressed(os.path.join(out_dir, FOLDER, REFERENCE), **arrays)
    return {k: v.shape for k, v in arrays.items()}, report
