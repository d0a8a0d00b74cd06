"""T2T 1.15.7's own optimizers against ours, a few steps on a tiny variable set.

The reference (``tools/t2t_reference/make_t2t_optimizer_reference.py``, run by T2T in its TF1
graph) starts four variables (a kernel, a bias, a layer-norm scale, a rank-3 tensor for
Adafactor's factoring) from fixed values, takes fixed gradients and a fixed learning rate per
step through T2T's weight decay, clipping and optimizer, and records the weights after each
step. Here the same hparams build our optimizer (``optimizers.make_optimizer``) and the same
gradients go through our decay/noise/clipping (``optimizers.regularization``).

Bound: every weight after step t is within ``gamma(OPS + N) * sum_{s<=t} (|w_{s-1}| + |w_s|)``
of T2T's, elementwise: one update rounds each element at most OPS=16 times (Adam's moments,
bias-corrected rate, square root, division, subtraction; fewer for the others) and the
reductions it depends on (clipping's global norm, Adafactor's RMS and row/column means) sum at
most N (all the variables' elements) terms; the first-order bound of Higham ch. 3 on both
evaluations, accumulated over the steps (``tests/float_bounds.py``).
"""

from __future__ import annotations

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.hparam import HParamsError
from t2t_repro.optimizer_names import registry_key
from t2t_repro.optimizers import check_optimizer, make_optimizer
from t2t_repro.optimizers.regularization import micro_step_gradients, regularized_gradients
from tests.float_bounds import gamma
from tests.tools import ROOT

REFERENCE_DIR = ROOT / "tests" / "data" / "t2t_reference"
META = REFERENCE_DIR / "t2t_1.15.7_optimizers.json"
ARRAYS = REFERENCE_DIR / "t2t_1.15.7_optimizers.npz"
OPS = 16


class StepTable(keras.optimizers.schedules.LearningRateSchedule):
    """The reference's learning rate of each update."""

    def __init__(self, values) -> None:
        self.values = tf.constant(values, tf.float32)

    def __call__(self, step):
        return tf.gather(self.values, step)


@pytest.fixture(scope="module")
def reference():
    meta = json.loads(META.read_text())
    return meta, dict(np.load(ARRAYS))


def _hparams(spec):
    hp = registry.hparams("basic_1")  # = T2T's basic_params1 for every name read here
    hp.optimizer = spec["optimizer"]
    for name, value in spec["hparams"].items():
        hp.set_hparam(name, value)
    return hp


def run_ours(spec, names, ref, steps):
    """Our weights after each update, from the reference's start, gradients and rates."""
    hp = _hparams(spec)
    multistep = registry_key(hp.optimizer) == "multistep_adam"
    n = max(1, hp.optimizer_multistep_accumulate_steps)
    optimizer = make_optimizer(hp, StepTable(ref["learning_rates"][n - 1 :: n]))
    variables = [keras.Variable(ref[f"init/{v}"], name=v.rsplit("/", 1)[-1]) for v in names]
    optimizer.build(variables)
    weights = []
    for update in range(steps):
        micro = [[tf.constant(ref[f"grad/{update * n + i}/{v}"]) for v in names] for i in range(n)]
        if multistep:  # T2T: (sum of the micro-steps' prepared gradients) / n
            total = None
            for i, grads in enumerate(micro):
                grads = micro_step_gradients(grads, variables, hp, update * n + i)
                total = (
                    grads if total is None else [a + b for a, b in zip(total, grads, strict=True)]
                )
            grads = [g / float(n) for g in total]
        else:
            grads = regularized_gradients(micro[0], variables, hp, optimizer.iterations)
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        weights.append([v.numpy() for v in variables])
    return weights, n


CASES = json.loads(META.read_text())["cases"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_matches_t2t(case, reference):
    meta, ref = reference
    names = list(meta["variables"])
    size = sum(int(np.prod(s)) for s in meta["variables"].values())
    ours, n = run_ours(meta["cases"][case], names, ref, meta["steps"])
    assert len(ours) == meta["steps"]
    for j, name in enumerate(names):
        previous = ref[f"init/{name}"].astype(np.float64)
        magnitude = np.zeros_like(previous)
        for update, weights in enumerate(ours):
            theirs = ref[f"{case}/{update * n + n - 1}/{name}"].astype(np.float64)
            magnitude += np.abs(previous) + np.abs(theirs)
            bound = gamma(OPS + size) * magnitude
            assert np.all(np.abs(weights[j] - theirs) <= bound), (case, name, update)
            assert not np.array_equal(theirs, previous), "the step must move the weights"
            previous = theirs
        if n > 1:  # T2T's accumulating micro-steps leave the weights alone
            assert np.array_equal(ref[f"{case}/0/{name}"], ref[f"init/{name}"])


SHARDED_CASES = json.loads(META.read_text())["sharded_cases"]


@pytest.mark.parametrize("case", sorted(SHARDED_CASES))
def test_adafactor_updates_t2ts_embedding_row_blocks_each_on_its_own(case, reference):
    """T2T's embedding is ``symbol_modality_num_shards`` variables; ours one matrix that
    Adafactor updates block by block (the same bound as above, the blocks' elements N)."""
    meta, ref = reference
    sharded = meta["sharded_variable"]
    name = sharded["name"]
    hp = _hparams(meta["sharded_cases"][case])
    hp.symbol_modality_num_shards = sharded["shards"]
    optimizer = make_optimizer(hp, StepTable(ref["learning_rates"]))
    variable = keras.Variable(ref[f"init/{name}"], name="weights")
    variable.t2t_row_sharded = True  # as layers/embedding.py marks it
    optimizer.build([variable])
    previous = ref[f"init/{name}"].astype(np.float64)
    magnitude = np.zeros_like(previous)
    for step in range(meta["steps"]):
        grads = [tf.constant(ref[f"grad/{step}/{name}"])]
        grads = regularized_gradients(grads, [variable], hp, optimizer.iterations)
        optimizer.apply_gradients(zip(grads, [variable], strict=True))
        theirs = ref[f"{case}/{step}/{name}"].astype(np.float64)
        magnitude += np.abs(previous) + np.abs(theirs)
        bound = gamma(OPS + previous.size) * magnitude
        assert np.all(np.abs(variable.numpy() - theirs) <= bound), (case, step)
        previous = theirs
    # One matrix of T2T's (1 shard) takes another update: the blocks are what makes it T2T's.
    hp.symbol_modality_num_shards = 1
    whole = make_optimizer(hp, StepTable(ref["learning_rates"]))
    unsharded = keras.Variable(ref[f"init/{name}"], name="weights")
    unsharded.t2t_row_sharded = True
    whole.apply_gradients([(tf.constant(ref[f"grad/0/{name}"]), unsharded)])
    first = ref[f"{case}/0/{name}"].astype(np.float64)
    first_bound = gamma(OPS + first.size) * (np.abs(ref[f"init/{name}"]) + np.abs(first))
    assert np.any(np.abs(unsharded.numpy() - first) > first_bound)


def test_t2t_optimizer_names():
    # tensor2tensor/utils/registry.py, optimizer: SGD/RMSProp, else camel to snake case.
    assert [
        registry_key(n) for n in ("SGD", "RMSProp", "Adam", "Adafactor", "AdamW", "TrueAdam")
    ] == ["sgd", "rms_prop", "adam", "adafactor", "adam_w", "true_adam"]
    for name, message in (
        ("yellow_fin", "YellowFin"),
        ("YellowFin", "YellowFin"),
        ("lazy_adam", "not a T2T optimizer"),
        ("nadam", "not a T2T optimizer"),
    ):
        hp = registry.hparams("transformer_base")
        hp.optimizer = name
        with pytest.raises(HParamsError, match=message):
            check_optimizer(hp)
    hp = registry.hparams("transformer_base")
    hp.optimizer, hp.optimizer_adafactor_decay_type = "Adafactor", "linear"
    with pytest.raises(HParamsError, match="decay_type='linear'"):
        check_optimizer(hp)
    hp = registry.hparams("transformer_base")
    hp.optimizer = "multistep_adam"
    with pytest.raises(HParamsError, match="accumulate_steps >= 1"):
        check_optimizer(hp)


def test_weight_noise_is_t2ts_scale_on_all_but_the_symbol_modality():
    """T2T's ``weight_noise``: truncated_normal * rate * lr * 0.001 on every /body/ variable;
    the same draw for the same step (every replica adds the same)."""
    from t2t_repro.optimizers.regularization import add_weight_noise

    body = keras.Variable(np.zeros([100, 100], np.float32), name="kernel")
    embedding = keras.Variable(np.zeros([100, 100], np.float32), name="weights")
    embedding.t2t_row_sharded = True
    add_weight_noise([body, embedding], 2.0, 0.5, step=7)
    noise = body.numpy()
    assert not embedding.numpy().any()
    scale = 2.0 * 0.5 * 0.001  # truncated at 2 sigma: std 0.8796 sigma
    assert np.abs(noise).max() <= 2 * scale * (1 + 1e-6)
    assert abs(noise.std() / (0.8796 * scale) - 1) < 0.05  # 10,000 draws: ~0.7% std error
    again = keras.Variable(np.zeros([100, 100], np.float32), name="kernel")
    add_weight_noise([again], 2.0, 0.5, step=7)
    assert np.array_equal(again.numpy(), noise)
