"""Records tensor2tensor 1.15.7's own optimizers on a tiny variable set (reference test data).

From fixed initial weights, a linear loss ``sum(v * G_t)`` (so the gradient of step t is the
fixed ``G_t``, plus T2T's weight decay) and a fixed learning rate per step, it runs a few
updates of each T2T optimizer in T2T's TF1 graph and records the weights after every step:

* the loss goes through T2T's own ``utils/optimize.py, weight_decay_and_noise`` (its L2 weight
  decay skips 1-D ``...bias:0`` variables); gradients are clipped by global norm as
  ``optimize_loss(clip_gradients=hparams.clip_grad_norm)`` does (``tf.clip_by_global_norm``);
* the optimizer is the one T2T's registry builds from the hparams (``registry.optimizer(name)
  (lr, hparams)``: ``momentum``, ``true_adam``, ``multistep_adam``, ``adafactor``) and gets
  ``apply_gradients(global_step=...)`` as in T2T's TF 1.15 path (global step incremented after
  the update). Under TF 2.21 T2T's ``contrib`` optimizers are missing, so for these the script
  builds what TF 1.15's contrib built, from ``tf.compat.v1``: ``adam`` (T2T's LazyAdam: its
  dense update is ``tf.train.AdamOptimizer``'s, which it subclasses); ``adam_w`` (contrib's
  ``AdamWOptimizer``: ``var -= weight_decay * var`` before each Adam update, the decay not
  scaled by the learning rate); ``sgd``/``adagrad``/``rms_prop``/``ftrl`` (contrib's
  ``OPTIMIZER_CLS_NAMES``: ``tf.train`` optimizers with their defaults).

It must run in a virtualenv of its own with T2T 1.15.7 (see README.md here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_optimizer_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_reference
"""

import argparse
import importlib.util
import json
import os
import sys
import types

import numpy as np

SHAPES = {
    "body/dense/kernel": (4, 3),
    "body/dense/bias": (3,),
    "body/layer_norm_scale": (3,),
    "body/attention/q": (2, 3, 4),
}
STEPS = 3
LEARNING_RATES = [0.01, 0.02, 0.015, 0.012, 0.03, 0.025]  # one per micro-step
# case: (optimizer, hparams overrides); the defaults are T2T's basic_params1.
CASES = {
    "adam": ("adam", {"optimizer_adam_beta1": 0.9, "optimizer_adam_beta2": 0.98}),
    "Adam_clip_decay": ("Adam", {"clip_grad_norm": 0.5, "weight_decay": 0.01}),
    "true_adam": ("true_adam", {"optimizer_adam_epsilon": 1e-9}),
    "adam_w": ("adam_w", {"weight_decay": 0.01, "optimizer_adam_beta2": 0.999}),
    "multistep_adam": ("multistep_adam", {"optimizer_multistep_accumulate_steps": 2}),
    "momentum": ("momentum", {}),
    "momentum_nesterov": ("momentum", {"optimizer_momentum_nesterov": True}),
    "sgd": ("SGD", {}),
    "adagrad": ("adagrad", {}),
    "rms_prop": ("RMSProp", {}),
    "ftrl": ("ftrl", {}),
    "adafactor": ("Adafactor", {}),
    "adafactor_adam_beta1": (
        "adafactor",
        {
            "optimizer_adafactor_decay_type": "adam",
            "optimizer_adafactor_beta1": 0.9,
            "optimizer_adafactor_factored": False,
            "optimizer_adafactor_multiply_by_parameter_scale": False,
            "optimizer_adafactor_clipping_threshold": 2.0,
        },
    ),
    "adafactor_unclipped_decay": (
        "adafactor",
        {"optimizer_adafactor_memory_exponent": 0.5, "weight_decay": 0.01},
    ),
}


# T2T's symbol-modality embedding in row blocks (layers/modalities.py, _get_weights: 10 rows
# in 3 shards are 4, 3, 3), which Adafactor updates as variables of their own; recorded
# joined, as this project holds the matrix.
SHARDED = ("body/emb/weights", (10, 4), 3)
SHARDED_CASES = {
    "adafactor_sharded": ("adafactor", {}),
    "adafactor_sharded_unfactored": (
        "adafactor",
        {"optimizer_adafactor_factored": False, "optimizer_adafactor_beta1": 0.9},
    ),
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder for the .npz and .json")
    return parser.parse_args()


def import_t2t(shim):
    spec = importlib.util.spec_from_file_location(
        "t2t_compat", os.path.join(os.path.abspath(shim), "t2t_compat.py")
    )
    t2t_compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t2t_compat)
    t2t_compat.install()
    import tensor2tensor

    models = types.ModuleType("tensor2tensor.models")
    models.__path__ = [os.path.join(os.path.dirname(tensor2tensor.__file__), "models")]
    sys.modules["tensor2tensor.models"] = models
    from tensor2tensor.layers import common_hparams
    from tensor2tensor.utils import optimize, registry

    return common_hparams, optimize, registry


def fixed_inputs():
    rng = np.random.RandomState(1537)
    init = {n: rng.normal(0, 0.5, s).astype(np.float32) for n, s in SHAPES.items()}
    grads = [
        {n: rng.normal(0, 0.3, s).astype(np.float32) for n, s in SHAPES.items()}
        for _ in range(STEPS * 2)
    ]
    return init, grads


def contrib_optimizer(tf, name, lr, hp):
    """What TF 1.15's contrib built for the T2T names that need it (module docstring)."""
    v1 = tf.compat.v1.train
    if name == "adam":  # LazyAdamOptimizer: AdamOptimizer's dense update
        return v1.AdamOptimizer(
            lr, hp.optimizer_adam_beta1, hp.optimizer_adam_beta2, hp.optimizer_adam_epsilon
        )
    if name == "adam_w":

        class AdamW(v1.AdamOptimizer):  # contrib's DecoupledWeightDecayExtension
            def _resource_apply_dense(self, grad, var):
                decay = var.assign_sub(hp.weight_decay * var)
                with tf.control_dependencies([decay]):
                    return super()._resource_apply_dense(grad, var)

        return AdamW(
            lr, hp.optimizer_adam_beta1, hp.optimizer_adam_beta2, hp.optimizer_adam_epsilon
        )
    return {
        "sgd": v1.GradientDescentOptimizer,
        "adagrad": v1.AdagradOptimizer,
        "rms_prop": v1.RMSPropOptimizer,
        "ftrl": v1.FtrlOptimizer,
    }[name](lr)


def sharded_inputs():
    name, shape, shards = SHARDED
    rng = np.random.RandomState(1538)
    init = rng.normal(0, 0.5, shape).astype(np.float32)
    grads = [rng.normal(0, 0.3, shape).astype(np.float32) for _ in range(STEPS)]
    rows = [shape[0] // shards + (1 if i < shape[0] % shards else 0) for i in range(shards)]
    cuts = np.cumsum(rows)[:-1]
    blocks = {f"{name}_{i}": b for i, b in enumerate(np.split(init, cuts))}
    grad_blocks = [{f"{name}_{i}": b for i, b in enumerate(np.split(g, cuts))} for g in grads]
    return init, grads, blocks, grad_blocks


def run_case(modules, optimizer_name, overrides, init, grads):
    common_hparams, optimize, registry = modules
    import tensorflow as tf

    hp = common_hparams.basic_params1()
    hp.optimizer = optimizer_name
    for key, value in overrides.items():
        hp.set_hparam(key, value)
    accumulate = max(1, hp.optimizer_multistep_accumulate_steps)
    micro_steps = STEPS * accumulate
    shapes = {n: v.shape for n, v in init.items()}
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        variables = [
            tf.compat.v1.get_variable(n, initializer=init[n], use_resource=True) for n in shapes
        ]
        grad_in = [tf.compat.v1.placeholder(tf.float32, s) for s in shapes.values()]
        lr = tf.compat.v1.placeholder(tf.float32, [])
        loss = tf.add_n([tf.reduce_sum(v * g) for v, g in zip(variables, grad_in, strict=True)])
        loss = optimize.weight_decay_and_noise(loss, hp, lr, variables)
        gradients = tf.gradients(loss, variables)
        if hp.clip_grad_norm:
            gradients, _ = tf.clip_by_global_norm(gradients, hp.clip_grad_norm)
        key = registry.optimizer.__globals__["misc_utils"].camelcase_to_snakecase(optimizer_name)
        key = {"SGD": "sgd", "RMSProp": "rms_prop"}.get(optimizer_name, key)
        if key in ("adam", "adam_w", "sgd", "adagrad", "rms_prop", "ftrl"):
            opt = contrib_optimizer(tf, key, lr, hp)
        else:
            opt = registry.optimizer(optimizer_name)(lr, hp)
        train = opt.apply_gradients(zip(gradients, variables, strict=True), global_step=global_step)
        weights = []
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for step in range(micro_steps):
                feed = {g: grads[step][n] for g, n in zip(grad_in, shapes, strict=True)}
                feed[lr] = LEARNING_RATES[step]
                sess.run(train, feed)
                weights.append(dict(zip(shapes, sess.run(variables), strict=True)))
    return weights


def main():
    args = parse_args()
    modules = import_t2t(args.shim)
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()
    init, grads = fixed_inputs()
    arrays = {f"init/{n}": v for n, v in init.items()}
    for step, g in enumerate(grads):
        arrays.update({f"grad/{step}/{n}": v for n, v in g.items()})
    arrays["learning_rates"] = np.array(LEARNING_RATES, np.float32)
    for case, (name, overrides) in CASES.items():
        for step, w in enumerate(run_case(modules, name, overrides, init, grads)):
            arrays.update({f"{case}/{step}/{n}": v for n, v in w.items()})
    name, shape, shards = SHARDED
    joined_init, joined_grads, blocks, grad_blocks = sharded_inputs()
    arrays[f"init/{name}"] = joined_init
    arrays.update({f"grad/{step}/{name}": g for step, g in enumerate(joined_grads)})
    for case, (optimizer, overrides) in SHARDED_CASES.items():
        for step, w in enumerate(run_case(modules, optimizer, overrides, blocks, grad_blocks)):
            arrays[f"{case}/{step}/{name}"] = np.concatenate([w[b] for b in blocks])
    meta = {
        "cases": {c: {"optimizer": n, "hparams": o} for c, (n, o) in CASES.items()},
        "variables": {n: list(s) for n, s in SHAPES.items()},
        "sharded_cases": {c: {"optimizer": n, "hparams": o} for c, (n, o) in SHARDED_CASES.items()},
        "sharded_variable": {"name": name, "shape": list(shape), "shards": shards},
        "steps": STEPS,
        "versions": {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__},
    }
    stem = os.path.join(args.out, "t2t_1.15.7_optimizers")
    with open(stem + ".npz.tmp", "wb") as f:
        np.savez_compressed(f, **arrays)
    os.replace(stem + ".npz.tmp", stem + ".npz")
    with open(stem + ".json.tmp", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(stem + ".json.tmp", stem + ".json")
    print(f"wrote {stem}.npz/.json: {len(CASES)} cases")


if __name__ == "__main__":
    main()
