"""Records tensor2tensor 1.15.7's own learning rates (reference test data).

For each setting of ``SETTINGS`` (a T2T hparams set plus overrides, T2T's ``train_steps``
added as its trainer adds it), builds T2T's ``utils/learning_rate.py, learning_rate_schedule``
in a TF1 graph and evaluates it at every step of ``steps()`` with the global step assigned;
the two warm-ups of ``_learning_rate_warmup`` (the legacy schedule asks only for "exp") are
evaluated on their own. A setting T2T cannot run records T2T's error instead of values.

Writes ``t2t_1.15.7_learning_rates.npz``: ``steps`` (int64), ``values`` (float32, one row per
setting; NaN where T2T failed) and ``settings`` (the JSON of the settings, their errors and
the versions). It must run in a virtualenv of its own with T2T 1.15.7, never in the
project's (see README.md here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_lr_reference.py \\
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_reference
"""

import argparse
import importlib.util
import json
import os
import sys
import types

import numpy as np

V3 = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
PIECEWISE = {"learning_rate_boundaries": [40000, 60000, 80000]}
PIECEWISE["learning_rate_multiples"] = [0.1, 0.01, 0.001]
NOAM = {"learning_rate_schedule": "legacy", "learning_rate_decay_scheme": "noam"}
# name: (T2T's set, overrides); every setting also gets train_steps=100000
SETTINGS = {
    "transformer_base": ("transformer_base", {}),
    "transformer_base_v1": ("transformer_base_v1", {}),
    "transformer_base_v2": ("transformer_base_v2", {}),
    "linear_decay": (
        "transformer_base",
        {"learning_rate_schedule": "constant*linear_warmup*rsqrt_decay*linear_decay"},
    ),
    "linear_decay_20k": (
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*linear_decay",
            "learning_rate_decay_steps": 20000,
        },
    ),
    "cosdecay_50k": (
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*cosdecay",
            "learning_rate_decay_steps": 50000,
        },
    ),
    "constant_cosdecay": ("transformer_base", {"learning_rate_schedule": "constant*cosdecay"}),
    "single_cycle_cos_decay": (
        "transformer_base",
        {"learning_rate_schedule": "constant*linear_warmup*single_cycle_cos_decay"},
    ),
    "multi_cycle_cos_decay_20k": (
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*multi_cycle_cos_decay",
            "learning_rate_decay_steps": 20000,
        },
    ),
    "rsqrt_normalized_decay": (
        "transformer_base",
        {"learning_rate_schedule": "constant*linear_warmup*rsqrt_normalized_decay"},
    ),
    "exp_decay": (
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*exp_decay",
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 10000,
        },
    ),
    "exp_decay_staircase": (
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*exp_decay",
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 10000,
            "learning_rate_decay_staircase": True,
        },
    ),
    "constant_rsqrt_hidden_size": (
        "transformer_base",
        {"learning_rate_schedule": " constant * rsqrt_hidden_size "},
    ),
    "constant_legacy": ("transformer_base", {"learning_rate_schedule": "constant*legacy"}),
    "legacy_noam_Adam": ("transformer_base_v1", {"optimizer": "Adam"}),
    "legacy_noam_adafactor": ("transformer_base_v1", {"optimizer": "adafactor"}),
    "legacy_none": ("transformer_base", {**NOAM, "learning_rate_decay_scheme": "none"}),
    "legacy_no_warmup_exp": (
        "transformer_base",
        {
            **NOAM,
            "learning_rate_decay_scheme": "exp",
            "learning_rate_warmup_steps": 0,
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 20000,
        },
    ),
    "legacy_exp": (
        "transformer_base",
        {
            **NOAM,
            "learning_rate_decay_scheme": "exp",
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 10000,
        },
    ),
    "legacy_exp_staircase": (
        "transformer_base",
        {
            **NOAM,
            "learning_rate_decay_scheme": "exp",
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 10000,
            "learning_rate_decay_staircase": True,
        },
    ),
    "legacy_piecewise": (
        "transformer_base",
        {**NOAM, "learning_rate_decay_scheme": "piecewise", **PIECEWISE},
    ),
    "legacy_cosine_30k": (
        "transformer_base",
        {
            **NOAM,
            "learning_rate_decay_scheme": "cosine",
            "learning_rate_cosine_cycle_steps": 30000,
        },
    ),
    "legacy_cosine": ("transformer_base", {**NOAM, "learning_rate_decay_scheme": "cosine"}),
    "legacy_sqrt": ("transformer_base", {**NOAM, "learning_rate_decay_scheme": "sqrt"}),
    "legacy_sqrt_Adam": (
        "transformer_base",
        {**NOAM, "learning_rate_decay_scheme": "sqrt", "optimizer": "Adam"},
    ),
    "legacy_cyclelinear10x": (
        "transformer_base",
        {**NOAM, "learning_rate_decay_scheme": "cyclelinear10x"},
    ),
    "multistep8_v3": (
        "transformer_base",
        {"optimizer": "multistep_adam", "optimizer_multistep_accumulate_steps": 8},
    ),
    "multistep4_noam": (
        "transformer_base_v1",
        {"optimizer": "multistep_adam", "optimizer_multistep_accumulate_steps": 4},
    ),
    "accumulate3_adam_cosdecay": (  # T2T divides whatever the optimizer
        "transformer_base",
        {
            "learning_rate_schedule": "constant*linear_warmup*cosdecay",
            "learning_rate_decay_steps": 50000,
            "optimizer_multistep_accumulate_steps": 3,
        },
    ),
    "multistep8_legacy_exp_staircase": (
        "transformer_base",
        {
            **NOAM,
            "learning_rate_decay_scheme": "exp",
            "learning_rate_decay_rate": 0.5,
            "learning_rate_decay_steps": 10000,
            "learning_rate_decay_staircase": True,
            "optimizer": "multistep_adam",
            "optimizer_multistep_accumulate_steps": 8,
        },
    ),
}
WARMUPS = {"warmup_exp": ("exp", 8000), "warmup_linear": ("linear", 8000)}
TRAIN_STEPS = 100000


def steps():
    """0..120k: every 500, and the steps around each boundary of the settings."""
    found = set(range(0, 120001, 500)) | set(range(0, 20))
    for point in (4000, 8000, 10000, 20000, 30000, 40000, 50000, 60000, 80000, 100000):
        found |= {point - 1, point, point + 1}
    found |= {32000, 32007, 64000, 64001, 64007, 250, 1234, 97500, 119999}
    return np.array(sorted(found), np.int64)


def install_t2t(shim):
    spec = importlib.util.spec_from_file_location(
        "t2t_compat", os.path.join(os.path.abspath(shim), "t2t_compat.py")
    )
    t2t_compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t2t_compat)
    t2t_compat.install()
    import tensor2tensor

    # models/__init__.py imports every model (RL, gym...): register the package bare.
    models = types.ModuleType("tensor2tensor.models")
    models.__path__ = [os.path.join(os.path.dirname(tensor2tensor.__file__), "models")]
    sys.modules["tensor2tensor.models"] = models


def evaluate(make_tensor, all_steps):
    """T2T's tensor at each global step (a fresh graph; the global step assigned)."""
    import tensorflow.compat.v1 as tf

    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        value = make_tensor()
        step = tf.placeholder(tf.int64, [])
        assign = tf.assign(global_step, step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for s in all_steps:
                sess.run(assign, {step: s})
                out.append(sess.run(value))
    return np.array(out, np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder for the .npz")
    args = parser.parse_args()
    install_t2t(args.shim)
    import tensorflow as tf
    from tensor2tensor.models import transformer  # noqa: F401  (registers its sets)
    from tensor2tensor.utils import learning_rate, registry

    all_steps = steps()
    rows, described = [], {}
    for name, (set_name, overrides) in SETTINGS.items():
        hparams = registry.hparams(set_name)
        hparams.add_hparam("train_steps", TRAIN_STEPS)  # utils/trainer_lib.py adds it
        for key, value in overrides.items():
            if key in hparams.values():
                hparams.set_hparam(key, value)
            else:
                hparams.add_hparam(key, value)
        error = ""
        try:
            row = evaluate(lambda hp=hparams: learning_rate.learning_rate_schedule(hp), all_steps)
        except Exception as e:  # T2T's own failure is the reference then
            error = f"{type(e).__name__}: {e}"
            row = np.full(len(all_steps), np.nan, np.float32)
        rows.append(row)
        described[name] = {"set": set_name, "overrides": overrides, "error": error}
        print(f"{name}: {error or 'ok'}")
    for name, (schedule, warmup_steps) in WARMUPS.items():
        hparams = registry.hparams("transformer_base")

        def warmup(hp=hparams, schedule=schedule, warmup_steps=warmup_steps):
            return learning_rate._learning_rate_warmup(warmup_steps, schedule, hp)

        rows.append(evaluate(warmup, all_steps))
        described[name] = {"warmup": schedule, "warmup_steps": warmup_steps, "error": ""}
    settings = {
        "train_steps": TRAIN_STEPS,
        "settings": described,
        "order": list(described),  # the rows of values
        "versions": {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__},
    }
    path = os.path.join(args.out, "t2t_1.15.7_learning_rates.npz")
    with open(path + ".tmp", "wb") as f:
        np.savez_compressed(
            f,
            steps=all_steps,
            values=np.stack(rows),
            settings=np.array(json.dumps(settings, sort_keys=True)),
        )
    os.replace(path + ".tmp", path)
    print(f"wrote {path}: {len(rows)} settings x {len(all_steps)} steps")


if __name__ == "__main__":
    main()
