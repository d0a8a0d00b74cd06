"""T2T 1.15.7's scheduled sampling (``scheduled_sampling_*`` hparams), made deterministic.

Companion of ``make_t2t_reference.py`` (``--only=sched``), run in T2T's virtualenv after the
shim is installed and after the packed reference's timing train dir exists (it reads its
``model.ckpt-300``, global step 300 included; no training here). What T2T does (cited by
file and function, under ``tensor2tensor/``):

* ``utils/t2t_model.py, T2TModel.model_fn_sharded``: in every mode, ``model_fn`` (the ordinary
  teacher-forced forward pass and its loss), then ``maybe_scheduled_sampling`` on its logits,
  whose losses replace the first pass's; ``average_sharded_losses`` makes T2T's
  ``losses["training"]`` of the ``(num, den)`` pair of ``T2TModel.loss`` (``_loss_single``:
  the symbol modality's label-smoothed, non-padding-weighted cross entropy) as
  ``num / max(1, den)``.
* ``T2TModel.maybe_scheduled_sampling``: the identity unless ``scheduled_sampling_prob`` > 0
  (it asserts it is then 1.0), the target modality is SYMBOL(-like) and the mode is TRAIN.
  ``scheduled_sampling_method="parallel"``: ``mixin_prob =
  scheduled_sampling.inverse_decay_mix_prob(warmup_schedule, gold_mixin_prob, warmup_steps)``
  (the global step read in the graph), then for ``i`` in ``range(num_passes)``
  (``parallel_scheduled_sampling_pass``): ``sample`` (``tf.multinomial`` of the previous
  pass's logits, the first pass's for ``i = 0``), ``mix_gold_sampled``
  (``where(tf.random_uniform([B, L, 1, 1]) < mixin_prob, sampled, gold)``, then
  ``where(timestep >= i, that, previous new targets)``, ``is_later_timestep``),
  ``stop_gradient``, then ``bottom``, ``body``, ``top`` again on ``features`` with
  ``targets`` = the new targets, and ``self.loss(new_logits, features)`` against the ORIGINAL
  targets. ``"sequential"`` (``num_passes`` must be 1):
  ``utils/scheduled_sampling.py, sequential_scheduled_sampling_for_t2tmodel`` ->
  ``sequential_scheduled_sampling``: raises ``ValueError`` unless the targets' shape is fully
  static; ``ss_tokens`` = zeros [B, L]; a ``tf.while_loop`` over ``i < L`` whose body runs the
  whole model on ``ss_tokens`` (``ScheduledSamplingAdapter.infer_fn``: bottom, body, top),
  takes the logits at ``i``, samples (``_sample_next_tokens``: ``tf.random.categorical``),
  mixes with the gold token at ``i`` (``ScheduledSamplingAdapter.mix_fn`` ->
  ``inverse_decay_mix_prob`` again, ``_mix_tokens``: ``tf.random_uniform([B])``) and writes
  it at ``i`` (``_update_timestep``); then one more ``infer_fn(ss_tokens)``, whose logits are
  returned, and ``loss_fn`` (``T2TModel.loss`` against the gold targets) as the only loss.
* ``layers/common_layers.py, inverse_exp_decay / inverse_lin_decay / inverse_sigmoid_decay``
  (``min_value=0.001``, the step from ``tf.train.get_global_step()``) are the three schedules
  of ``inverse_decay_mix_prob`` (``"exp"``, ``"linear"``, ``"sigmoid"``), times ``p_max``
  (``gold_mixin_prob``); ``schedule_mix_prob`` records them at explicit global steps.

Patched here, only while the graphs are built (each restored afterwards), through stand-ins of
the ``tf`` module objects of ``utils/t2t_model.py`` and ``utils/scheduled_sampling.py`` that
forward every other name to ``tensorflow.compat.v1``:

* the sampler: ``tf.multinomial(logits, n)`` (``maybe_scheduled_sampling.sample``) and
  ``tf.random.categorical(logits, n)`` (``_sample_next_tokens``) return ``SAMPLER``:
  ``argmax(logits, axis=-1)`` (the first index of the largest logit; int64 [N, n]);
* ``tf.random_uniform(shape)`` (``mix_gold_sampled`` and ``_mix_tokens``) returns ``UNIFORM``
  in float32: ``u[b, t, ...] = ((3*b + 7*t + 5*k) % 10 + 0.5) / 10``, broadcast over the
  trailing axes, ``k`` the pass (``parallel``: the k-th ``tf.random_uniform`` call of the graph
  is pass ``k``'s). In ``sequential`` the call (shape [B], traced once inside the while loop)
  gets ``k = 0`` and ``t`` = the loop's ``i``, read from the ``tf.slice(targets, [0, i], ...)``
  just before it in ``body_fn`` (the stand-in ``tf.slice`` notes its ``begin[1]``).
  A position takes the sample where ``u < mixin_prob``, so with ``mixin_prob`` 0.5 row 0 takes
  it at t = 0, 2, 3, 6 in the first pass;
* ``scheduled_sampling._update_timestep``: T2T's body with ``perm = list(range(...))``. T2T's
  ``perm = range(...)`` then ``perm[0], perm[1] = ...`` is Python 2 only: T2T 1.15.7's
  sequential method raises ``TypeError`` under Python 3 (kept as ``sequential_py3_error``;
  ``sequential_dynamic_shape_error`` is its ``ValueError`` for targets of unknown shape).

Every ``*dropout`` hparam is set to 0 (the case strings say so) so that the TRAIN forward is
deterministic; ``label_smoothing`` stays the train dir's (0.1, recorded). Per case, from the
checkpoint read back (the model's variables and ``global_step``): T2T's ``losses["training"]``,
the returned (last pass's) logits, the targets each forward pass was fed (captured from
``T2TModel.bottom``; index 0 is the gold of ``model_fn``'s pass), each pass's logits (from
``T2TModel.top``) and ``(num, den)`` (from ``T2TModel.loss``), ``mixin_prob`` (one more
``inverse_decay_mix_prob`` call of the same graph: the same hparams and global step) and the
global step. ``sequential``'s passes inside the while loop cannot be fetched: its ``pass_*``
arrays hold ``model_fn``'s pass and the final one. ``write`` checks T2T's new targets against
the formulas above (for ``sequential``: the sample at ``t`` is the argmax of the final logits
at ``t``, which see only tokens before ``t``, the ones the loop had written), that
``mixin_prob`` is at least 0.01 from every value of ``u`` and each argmax ahead by 1e-3 (so a
float32 reimplementation draws the same tokens), and that ``model_fn``'s pass is the same in
every case.
"""

import os
import time
from functools import partial

FOLDER = "scheduled_sampling"  # under the --out folder (tests/data/t2t_reference)
REFERENCE = "t2t_1.15.7_scheduled_sampling.npz"
TRAIN_DIR = os.path.join("packed", "t2t_timing_train_dir")
VOCAB = 13
SAMPLER = "argmax(logits, axis=-1): the first index of the largest logit"
UNIFORM = "u[b, t, ...] = ((3*b + 7*t + 5*k) % 10 + 0.5) / 10 (float32; k = pass, 0 sequential)"
# case: (method, num_passes, warmup_schedule, warmup_steps, gold_mixin_prob); the checkpoint's
# step is 300: exp over 200 steps is past warmup (mixin 0.5), exp over 400 is 0.001 ** 0.25.
CASES = {
    "parallel_1": ("parallel", 1, "exp", 200, 0.5),
    "parallel_2": ("parallel", 2, "exp", 200, 0.5),
    "parallel_exp_warmup": ("parallel", 1, "exp", 400, 1.0),
    "parallel_linear_3": ("parallel", 3, "linear", 500, 0.5),
    "parallel_sigmoid_2": ("parallel", 2, "sigmoid", 500, 0.75),
    "sequential": ("sequential", 1, "exp", 200, 0.5),
    "sequential_linear": ("sequential", 1, "linear", 600, 0.8),
}
# knobs_reference.py's batch: reversal pairs of different lengths, padding in both rows.
INPUTS = ((4, 7, 9, 11, 5, 2, 1), (8, 3, 1))
TARGETS = ((2, 5, 11, 9, 7, 4, 1), (3, 8, 1))
INPUT_LENGTH, TARGET_LENGTH = 7, 8
SCHEDULES = ("exp", "linear", "sigmoid")
SCHEDULE_P_MAX = (1.0, 0.5)
SCHEDULE_WARMUP = (1, 50, 100, 1000, 50000)
SCHEDULE_STEPS = (0, 1, 2, 10, 49, 50, 51, 99, 100, 101, 150, 300, 999, 1000, 1001, 5000, 10**6)

_PACKED: dict = {}  # packed_reference.py, handed over by make_t2t_reference.py


def uniform_np(np, batch, length, k, t=None):
    """UNIFORM as numpy float32 [batch, length] (or [batch] at timestep ``t``)."""
    b = np.arange(batch)[:, None]
    t = np.arange(length)[None, :] if t is None else np.asarray(t)
    return (((3 * b + 7 * t + 5 * k) % 10).astype(np.float32) + np.float32(0.5)) / np.float32(10)


def deterministic_tf(tf):
    """The stand-ins' functions (see the docstring) and their state (pass count, timestep)."""
    state = {"calls": 0, "timestep": None}

    def sampler(logits, num_samples, *args, **kwargs):
        best = tf.argmax(logits, axis=-1, output_type=tf.int64)[:, None]
        return tf.tile(best, [1, num_samples])

    def random_uniform(shape, *args, **kwargs):
        shape = [int(d) for d in shape]
        k, state["calls"] = state["calls"], state["calls"] + 1
        b = tf.reshape(tf.range(shape[0]), [-1] + [1] * (len(shape) - 1))
        if len(shape) == 1:  # _mix_tokens in the sequential loop: timestep i, pass 0
            t, k = tf.cast(state["timestep"], tf.int32), 0
        else:
            t = tf.reshape(tf.range(shape[1]), [1, -1] + [1] * (len(shape) - 2))
        u = (tf.cast((3 * b + 7 * t + 5 * k) % 10, tf.float32) + 0.5) / 10.0
        return tf.broadcast_to(u, shape)

    def noting_slice(input_, begin, size, *args, **kwargs):
        if len(begin) == 2:  # body_fn's gold slice targets[:, i]
            state["timestep"] = begin[1]
        return tf.slice(input_, begin, size, *args, **kwargs)

    return state, sampler, random_uniform, noting_slice


def update_timestep_py3(tf, inplace_ops):
    """T2T's ``scheduled_sampling._update_timestep`` with ``perm`` a list (Python 3)."""

    def _update_timestep(x, timestep, values):
        perm = list(range(x.shape.ndims))
        perm[0], perm[1] = perm[1], perm[0]
        x = tf.transpose(x, perm)
        x = inplace_ops.alias_inplace_update(x, timestep, values)
        x = tf.transpose(x, perm)
        return x

    return _update_timestep


def case_hparams(transformer, hparams_lib, train_dir, overrides, problem):
    hparams = _PACKED["module"].saved_hparams(transformer, hparams_lib, train_dir)
    hparams.parse(overrides)
    hparams.problem_hparams = problem
    return hparams


def in_loop(tensor):
    return tensor.op._get_control_flow_context() is not None


def build_case(tf, modules, hparams, features, py3_fix=True):
    """T2T's TRAIN graph of ``features`` with the patches; returns what to fetch."""
    t2t_model, scheduled_sampling, transformer, inplace_ops = modules
    _, sampler, random_uniform, noting_slice = deterministic_tf(tf)
    saved = (t2t_model.tf, scheduled_sampling.tf, scheduled_sampling._update_timestep)
    t2t_model.tf = _PACKED["module"].StandIn(
        saved[0], multinomial=sampler, random_uniform=random_uniform
    )
    scheduled_sampling.tf = _PACKED["module"].StandIn(
        saved[1],
        random=_PACKED["module"].StandIn(saved[1].random, categorical=sampler),
        random_uniform=random_uniform,
        slice=noting_slice,
    )
    if py3_fix:
        scheduled_sampling._update_timestep = update_timestep_py3(tf, inplace_ops)
    try:
        global_step = tf.compat.v1.train.get_or_create_global_step()
        model = transformer.Transformer(
            hparams, tf.estimator.ModeKeys.TRAIN, hparams.problem_hparams
        )
        seen = {"targets": [], "logits": [], "loss": []}
        for name, key in (("bottom", "targets"), ("top", "logits"), ("loss", "loss")):
            method = getattr(model, name)

            def capturing(*args, _method=method, _key=key, **kwargs):
                out = _method(*args, **kwargs)
                seen[_key].append(args[0]["targets"] if _key == "targets" else out)
                return out

            setattr(model, name, capturing)
        logits, losses = model(features)
    finally:
        t2t_model.tf, scheduled_sampling.tf, scheduled_sampling._update_timestep = saved
    mixin_prob = scheduled_sampling.inverse_decay_mix_prob(
        hparams.scheduled_sampling_warmup_schedule,
        hparams.scheduled_sampling_gold_mixin_prob,
        hparams.scheduled_sampling_warmup_steps,
    )
    batch, length = features["targets"].shape.as_list()[:2]
    return {
        "loss": losses["training"],
        "logits": tf.reshape(logits, [batch, length, VOCAB]),
        "pass_targets": tf.stack(
            [tf.reshape(x, [batch, length]) for x in seen["targets"] if not in_loop(x)]
        ),
        "pass_logits": tf.stack(
            [tf.reshape(x, [batch, length, VOCAB]) for x in seen["logits"] if not in_loop(x)]
        ),
        "pass_loss": tf.stack([tf.stack(x) for x in seen["loss"] if not in_loop(x[0])]),
        "mixin_prob": mixin_prob,
        "global_step": global_step,
    }


def restored_run(tf, train_dir, fetch):
    """``fetch`` with the model's variables and ``global_step`` read from ``train_dir``."""
    names = [
        v
        for v in tf.compat.v1.global_variables()
        if v.name.startswith("transformer/") or v.name == "global_step:0"
    ]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(names).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)


def error_of(fn):
    try:
        fn()
    except (ValueError, TypeError) as e:
        message = str(e).strip().splitlines()[-1].strip()
        return f"{type(e).__name__}: {message.removeprefix(type(e).__name__ + ': ')}"
    raise AssertionError("T2T did not raise")


def schedule_table(np, tf, scheduled_sampling):
    """``inverse_decay_mix_prob`` [schedule, p_max, warmup, step] at explicit global steps."""
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        table = [
            [
                [
                    scheduled_sampling.inverse_decay_mix_prob(name, p_max, warmup)
                    for warmup in SCHEDULE_WARMUP
                ]
                for p_max in SCHEDULE_P_MAX
            ]
            for name in SCHEDULES
        ]
        value = tf.compat.v1.placeholder(tf.int64, [])
        assign = step.assign(value)
        out = []
        with tf.compat.v1.Session() as sess:
            for s in SCHEDULE_STEPS:
                sess.run(assign, {value: s})
                out.append(sess.run(table))
    return np.moveaxis(np.asarray(out, np.float32), 0, -1)


def check(np, arrays, case, method, passes):
    """T2T's new targets against SAMPLER and UNIFORM; returns the smallest argmax margin."""
    gold, p = arrays["targets"], np.float32(arrays[f"{case}_mixin_prob"])
    pass_targets, pass_logits = arrays[f"{case}_pass_targets"], arrays[f"{case}_pass_logits"]
    batch, length = gold.shape
    assert np.abs(p - (np.arange(10) + 0.5) / 10).min() > 0.01, (case, p)  # clear of every u
    if method == "parallel":
        expected, sampled_from = gold, pass_logits[:-1]
        for i in range(passes):
            mixed = np.where(uniform_np(np, batch, length, i) < p, pass_logits[i].argmax(-1), gold)
            expected = np.where(np.arange(length)[None] >= i, mixed, expected)
            assert np.array_equal(pass_targets[i + 1], expected), (case, i)
    else:  # the final pass's logits at t see the tokens before t only (causal decoder)
        sampled_from = pass_logits[-1:]
        u = np.concatenate([uniform_np(np, batch, length, 0, t) for t in range(length)], 1)
        expected = np.where(u < p, pass_logits[-1].argmax(-1), gold)
        assert np.array_equal(pass_targets[-1], expected), case
    assert np.array_equal(arrays[f"{case}_new_targets"], pass_targets[-1])
    num, den = arrays[f"{case}_pass_loss"][-1]
    assert abs(arrays[f"{case}_loss"] - num / max(1.0, den)) < 1e-6, case
    top2 = np.sort(sampled_from, -1)[..., -2:]
    margin = float((top2[..., 1] - top2[..., 0]).min())
    assert margin > 1e-3, (case, margin)  # an argmax a float32 reimplementation repeats
    return margin


def write(out_dir, packed_reference):
    """Writes ``FOLDER/REFERENCE``; returns its arrays' shapes and a per-case report. The
    module: ``packed_reference.py`` (saved_hparams, problem_hparams, checkpoint_sha256)."""
    start = time.process_time()
    _PACKED["module"] = packed_reference
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.layers import modalities
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import hparam, hparams_lib, scheduled_sampling, t2t_model
    from tensorflow.python.ops import inplace_ops

    modules = (t2t_model, scheduled_sampling, transformer, inplace_ops)
    train_dir = os.path.join(out_dir, TRAIN_DIR)
    problem = packed_reference.problem_hparams(hparam, modalities, True)
    saved = case_hparams(transformer, hparams_lib, train_dir, "", problem)
    dropouts = ",".join(f"{k}=0.0" for k in sorted(saved.values()) if k.endswith("dropout"))
    inputs, targets = (
        _PACKED["module"].padded(np, INPUTS, INPUT_LENGTH),
        _PACKED["module"].padded(np, TARGETS, TARGET_LENGTH),
    )
    arrays = {
        "inputs": inputs,
        "targets": targets,
        "train_dir": np.asarray(TRAIN_DIR),
        "sha256": np.asarray(packed_reference.checkpoint_sha256(train_dir)),
        "label_smoothing": np.float32(saved.label_smoothing),
        "dropouts": np.asarray(dropouts),
        "sampler": np.asarray(SAMPLER),
        "uniform": np.asarray(UNIFORM),
    }

    def features(targets_tensor):
        return {
            "inputs": tf.constant(inputs[:, :, None, None]),
            "targets": targets_tensor,
            "target_space_id": tf.constant(0, tf.int32),
        }

    report = {}
    for case, (method, passes, schedule, warmup, gold_prob) in CASES.items():
        overrides = (
            f"scheduled_sampling_prob=1.0,scheduled_sampling_method={method},"
            f"scheduled_sampling_num_passes={passes},scheduled_sampling_warmup_schedule="
            f"{schedule},scheduled_sampling_warmup_steps={warmup},"
            f"scheduled_sampling_gold_mixin_prob={gold_prob},{dropouts}"
        )
        hparams = case_hparams(transformer, hparams_lib, train_dir, overrides, problem)
        with tf.Graph().as_default():
            fetch = build_case(
                tf, modules, hparams, features(tf.constant(targets[..., None, None]))
            )
            values = restored_run(tf, train_dir, fetch)
        arrays[f"{case}_hparams"] = np.asarray(overrides)
        for name, value in values.items():
            value = np.asarray(value)
            arrays[f"{case}_{name}"] = (
                value.astype(np.float32) if value.dtype.kind == "f" else value
            )
        arrays[f"{case}_new_targets"] = arrays[f"{case}_pass_targets"][-1]
        assert np.array_equal(arrays[f"{case}_logits"], arrays[f"{case}_pass_logits"][-1])
        margin = check(np, arrays, case, method, passes)
        report[case] = {
            "mixin_prob": float(values["mixin_prob"]),
            "step": int(values["global_step"]),
            "loss": float(values["loss"]),
            "argmax margin": round(margin, 4),
        }
    first = arrays["parallel_1_pass_logits"][0]  # model_fn's pass: the same in every case
    for case in CASES:
        assert np.abs(arrays[f"{case}_pass_logits"][0] - first).max() < 1e-6, case
    hparams = case_hparams(
        transformer, hparams_lib, train_dir, arrays["sequential_hparams"].item(), problem
    )

    def build(py3_fix, targets_tensor):  # graph building only: T2T raises there
        with tf.Graph().as_default():
            build_case(tf, modules, hparams, features(targets_tensor()), py3_fix)

    static = partial(tf.constant, targets[..., None, None])
    unknown = partial(tf.compat.v1.placeholder, tf.int32, [None, None, 1, 1])
    arrays["sequential_py3_error"] = np.asarray(error_of(partial(build, False, static)))
    arrays["sequential_dynamic_shape_error"] = np.asarray(error_of(partial(build, True, unknown)))
    for name in ("sequential_py3_error", "sequential_dynamic_shape_error"):
        report[name] = arrays[name].item()
    arrays.update(
        schedule_names=np.asarray(SCHEDULES),
        schedule_p_max=np.asarray(SCHEDULE_P_MAX, np.float32),
        schedule_warmup_steps=np.asarray(SCHEDULE_WARMUP, np.int64),
        schedule_steps=np.asarray(SCHEDULE_STEPS, np.int64),
        schedule_mix_prob=schedule_table(np, tf, scheduled_sampling),
    )
    knobs = os.path.join(out_dir, "knobs", "t2t_1.15.7_knobs.npz")
    if os.path.exists(knobs):  # TRAIN without dropout vs EVAL, the same weights and batch
        report["first pass vs knobs' base EVAL logits"] = float(
            np.abs(first - np.load(knobs)["base_logits"]).max()
        )
    os.makedirs(os.path.join(out_dir, FOLDER), exist_ok=True)
    np.savez_compressed(os.path.join(out_dir, FOLDER, REFERENCE), **arrays)
    report["cpu seconds"] = round(time.process_time() - start, 1)
    return {k: v.shape for k, v in arrays.items()}, report
