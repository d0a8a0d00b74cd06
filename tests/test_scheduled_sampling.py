"""T2T's scheduled sampling (``scheduled_sampling_*``; ``training/loop/scheduled_sampling.py``).

What T2T 1.15.7 itself computes is held in tests/data/t2t_reference/scheduled_sampling (made by
tools/t2t_reference/scheduled_sampling_reference.py, ``make_t2t_reference.py --only=sched``):
its warm-up schedules at given steps, and for a tiny T2T train dir in TRAIN mode without dropout,
the targets the last pass read and its loss, with T2T's random draws replaced by deterministic
ones (the reference's docstring gives them) that the test gives ours too.
"""

import hashlib

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.errors import UserError
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.hparams_lib.checks import validate
from t2t_repro.optimizers import make_optimizer
from t2t_repro.training.loop.scheduled_sampling import (
    ScheduledSampling,
    sampling_for,
    scheduled_targets,
)
from t2t_repro.training.loop.train_step import TrainMetrics, batch_loss_sums, make_train_loop
from t2t_repro.training.output_dir import saved_hparams
from t2t_repro.training.run_setup import built_model
from tests.float_bounds import UNIT_ROUNDOFF
from tests.model_utils import build_model
from tests.t2t_fixtures import REFERENCE, reference, shared_import
from tests.test_loss_rows import kept_rows_loss_rtol
from tests.tools import NO_DROPOUT, PLUMBING_MODEL

pytestmark = pytest.mark.usefixtures("without_grappler")

REF = "scheduled_sampling/t2t_1.15.7_scheduled_sampling.npz"
REGENERATE = "run tools/t2t_reference/make_t2t_reference.py --only=sched (README there)"
T2T_CASES = (
    "parallel_1",
    "parallel_2",
    "parallel_exp_warmup",
    "parallel_linear_3",
    "parallel_sigmoid_2",
    "sequential",  # (the reference's sequential_linear: the same code, another warm-up)
)

SS = "scheduled_sampling_prob=1.0,scheduled_sampling_warmup_steps=1"
BATCH = {
    "inputs": tf.constant([[3, 4, 5, 1], [6, 7, 1, 0]]),
    "targets": tf.constant([[6, 7, 8, 9, 1], [9, 1, 0, 0, 0]]),
}


def _model(overrides: str = ""):
    return build_model("transformer_tiny", f"{PLUMBING_MODEL},{NO_DROPOUT},{overrides}", 20)


def _train(model, updates: int = 2) -> float:  # (the first at learning rate 0)
    optimizer = make_optimizer(model.hparams)
    optimizer.build(model.trainable_variables)
    metrics = TrainMetrics()
    loop = make_train_loop(tf.distribute.get_strategy(), model, optimizer, model.hparams, metrics)
    loop(iter(tf.data.Dataset.from_tensors(BATCH).repeat()), tf.constant(updates))
    return metrics.read()["loss_sum"] / updates


def test_all_gold_tokens_give_the_loss_without_scheduled_sampling():
    """A mix-in probability of 0 keeps every gold token: the loss of a step without it (to
    the rounding of the decoder on every row against its kept rows)."""
    tf.keras.utils.set_random_seed(3)
    model = _model(f"{SS},scheduled_sampling_gold_mixin_prob=0.0")
    for method in ("parallel", "sequential"):
        sampling = ScheduledSampling.of(
            model.hparams.copy().parse(f"scheduled_sampling_method={method}")
        )
        drawn = scheduled_targets(model, BATCH, sampling, 3)
        np.testing.assert_array_equal(drawn, BATCH["targets"])
    loss, _ = batch_loss_sums(model, BATCH, 0.1, drawn)
    plain, _ = batch_loss_sums(model, BATCH, 0.1)
    np.testing.assert_allclose(loss, plain, rtol=2 * kept_rows_loss_rtol(model.hparams, 4, 5))


def test_it_trains_and_draws_again_the_same_at_the_same_step():
    """In the trainer's loop (its graph: the sequential method's while loop) it trains; the
    draws are seeded by the step, so a resumed run draws what an uninterrupted one would, and
    another step draws anew. (Each method's draws against T2T's: below.)"""
    tf.keras.utils.set_random_seed(4)
    model = _model(
        f"{SS},scheduled_sampling_gold_mixin_prob=1.0,scheduled_sampling_method=sequential"
    )
    before = [w.copy() for w in model.get_weights()]
    assert np.isfinite(_train(model))
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights(), strict=True))
    # (the draws' seeding is the methods' own: the one-pass method shows it cheaply)
    sampling = ScheduledSampling("parallel", 1, 1.0, "exp", 1)
    batch = {
        "inputs": tf.tile(BATCH["inputs"], [8, 1]),
        "targets": tf.tile(BATCH["targets"], [8, 1]),
    }
    at_5 = scheduled_targets(model, batch, sampling, 5).numpy()
    np.testing.assert_array_equal(scheduled_targets(model, batch, sampling, 5), at_5)
    assert not np.array_equal(scheduled_targets(model, batch, sampling, 6), at_5)
    assert not np.array_equal(at_5, batch["targets"])  # every token drawn (mix-in 1)


def test_what_t2t_refuses_with_it_is_refused_in_one_line():
    for overrides, message in (
        ("scheduled_sampling_method=sequential,scheduled_sampling_num_passes=2", "must be 1"),
        ("scheduled_sampling_num_passes=0", "must be positive"),
    ):
        with pytest.raises(ValueError, match=message) as e:
            ScheduledSampling.of(create_hparams("transformer_tiny", f"{SS},{overrides}"))
        assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="T2T asserts 0 .off. or 1 .on."):
        validate(create_hparams("transformer_tiny", "scheduled_sampling_prob=0.5"))
    classifier = create_hparams(
        "transformer_tiny", SS, input_vocab_size=20, target_vocab_size=3, class_label_target=True
    )
    with pytest.raises(UserError, match="--model=transformer_encoder: .*class label"):
        built_model("transformer_encoder", classifier)
    plain = _model()
    assert sampling_for(plain, plain.hparams) is None


def test_the_loss_reads_the_drawn_targets_and_scores_the_gold_ones():
    """``batch_loss_sums`` with drawn targets: the decoder reads them, the labels stay gold
    (T2T's smoothed cross entropy, written out here in numpy)."""
    tf.keras.utils.set_random_seed(5)
    model = _model()
    drawn = tf.constant([[6, 2, 8, 9, 1], [9, 1, 4, 0, 0]])
    loss, tokens = batch_loss_sums(model, BATCH, 0.1, drawn)
    logits = model({**BATCH, "targets": drawn}, training=False).numpy().astype(np.float64)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    vocab, gold = log_p.shape[-1], BATCH["targets"].numpy()
    soft = np.full(log_p.shape, 0.1 / (vocab - 1))
    np.put_along_axis(soft, gold[..., None], 0.9, axis=-1)
    entropy = -(0.9 * np.log(0.9) + 0.1 * np.log(0.1 / (vocab - 1)))
    want = ((-(soft * log_p).sum(-1) - entropy) * (gold != 0)).sum()
    assert tokens == 7.0
    rtol = 2 * kept_rows_loss_rtol(model.hparams, 4, 5)
    np.testing.assert_allclose(float(loss), want, rtol=rtol)
    gold_read, _ = batch_loss_sums(model, BATCH, 0.1)
    assert abs(float(gold_read) - want) > 100 * rtol * want  # not the gold-conditioned loss


# -- against T2T 1.15.7 ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def t2t():
    """(T2T's reference, our model of its train dir with every dropout 0, its hparams)."""
    ref = reference(REF)
    train_dir = REFERENCE / str(ref["train_dir"])
    prefix = (train_dir / "checkpoint").read_text().split('"')[1]
    digest = hashlib.sha256()
    for path in sorted(train_dir.glob(f"{prefix}.*")):
        digest.update(path.read_bytes())
    assert digest.hexdigest() == str(ref["sha256"]), f"{train_dir}: {REGENERATE}"
    path, _ = shared_import(train_dir)  # the run's one import of it (read only)
    hp = saved_hparams(str(path)).parse(str(ref["dropouts"]))
    model = registry.model("transformer")(hp)
    restore_model(model, str(path))
    return ref, model, hp


def argmax_draw(logits, seed):
    """The reference's deterministic sampler: the first index of the largest logit."""
    return tf.argmax(logits, -1, output_type=tf.int32)


class PatternUniform:
    """The reference's deterministic uniform draws, u = ((3b + 7t + 5k) % 10 + 0.5) / 10: k the
    pass (parallel: one [B, L] draw a pass), t the position (sequential: one [B] draw a
    position, in order, k = 0)."""

    def __init__(self, method: str) -> None:
        self.method, self.calls = method, 0

    def __call__(self, shape, seed):
        b = np.arange(int(shape[0]))[:, None]
        if self.method == "parallel":
            t, k = np.arange(int(shape[1]))[None, :], self.calls
        else:
            t, k = self.calls, 0
        self.calls += 1
        u = ((3 * b + 7 * t + 5 * k) % 10 + 0.5) / 10
        return tf.constant(u.reshape([int(d) for d in shape]), tf.float32)


def test_the_warm_ups_are_t2ts(t2t):
    """T2T's inverse_decay_mix_prob at given steps. The exponential one raises a rounded base
    to the power max_step - step: its rounding grows with that power (a derived bound). (The
    17 steps in one call: the schedule is elementwise in the step; 510 scalar calls of its
    eager ops were ~0.5 CPU-s.)"""
    ref = t2t[0]
    names, p_max, warmups, steps = (
        ref[f"schedule_{k}"] for k in ("names", "p_max", "warmup_steps", "steps")
    )
    for i, name in enumerate(names):
        for j, p in enumerate(p_max):
            for k, warmup in enumerate(warmups):
                sampling = ScheduledSampling("parallel", 1, float(p), str(name), int(warmup))
                got = sampling.mixin_prob(steps).numpy().astype(np.float64)
                power = np.maximum(warmup - steps, 0) if name == "exp" else 0
                rtol = (power + 16) * 2 * UNIT_ROUNDOFF
                want = ref["schedule_mix_prob"][i, j, k]
                assert np.all(np.abs(got - want) <= rtol * np.abs(want)), (name, p, warmup)


@pytest.mark.parametrize("case", T2T_CASES)
def test_the_drawn_targets_and_the_loss_are_t2ts(t2t, case):
    """With T2T's draws made deterministic (the same in both), the targets the last pass
    reads are T2T's at every position, padding included, and its logits and loss T2T's to the
    float32 rounding of the stacks (``kept_rows_loss_rtol``)."""
    ref, model, hp = t2t
    sampling = ScheduledSampling.of(hp.copy().parse(str(ref[f"{case}_hparams"])))
    step = int(ref[f"{case}_global_step"])
    power = max(sampling.warmup_steps - step, 0) if sampling.warmup_schedule == "exp" else 0
    rtol = (power + 16) * 2 * UNIT_ROUNDOFF  # as the warm-ups' test derives it
    np.testing.assert_allclose(sampling.mixin_prob(step), ref[f"{case}_mixin_prob"], rtol=rtol)
    batch = {side: tf.constant(ref[side], tf.int32) for side in ("inputs", "targets")}
    uniform = PatternUniform(sampling.method)
    drawn = scheduled_targets(model, batch, sampling, step, argmax_draw, uniform)
    assert uniform.calls == (sampling.num_passes if sampling.method == "parallel" else 8)
    np.testing.assert_array_equal(drawn, ref[f"{case}_new_targets"])
    rtol = kept_rows_loss_rtol(hp, ref["inputs"].shape[1], ref["targets"].shape[1])
    features = {**batch, "targets": drawn}
    logits = model.output_logits(model.decoder_output(features, training=True, every_row=True))
    want = ref[f"{case}_logits"]
    np.testing.assert_allclose(logits, want, rtol=0, atol=rtol * np.abs(want).max())
    loss, tokens = batch_loss_sums(model, batch, float(ref["label_smoothing"]), drawn)
    # a token's loss is a log-sum-exp of the logits minus one of them: the bound twice
    np.testing.assert_allclose(float(loss / tokens), ref[f"{case}_loss"], rtol=2 * rtol)
