"""Every factor, legacy decay scheme and warm-up of T2T 1.15.7's ``utils/learning_rate.py``
against T2T's own ``learning_rate_schedule``, evaluated by T2T in its TF1 graph at 286 steps
from 0 to 120k (tools/t2t_reference/make_t2t_lr_reference.py): the issue #53 settings,
including the four that differed without a word before (linear_decay, cosdecay, the decay
hparams, ``optimizer="Adam"``), T2T's step division for multi-step optimizers, and the
scheme T2T itself cannot run (cyclelinear10x).

The bound. Ours runs T2T's float32 operations in T2T's order; T2T's graph optimizer rewrites
some of them (a division by a constant becomes a product with its float32 reciprocal,
constant products are reassociated), so a value may differ from T2T's by a few roundings of
2^-24 each, amplified only by ``exp_decay``'s power (|p ln r| <= 7.8 here) to 8.3e-7 at most
on this machine: within the issue's relative 1e-6. Where a cosine factor's ``1 + cos``
cancels, one float32 ulp of cos (which other CPU kinds may round differently) is 2^-23 of the
rest of the product, at most the setting's peak; that absolute slack is added there.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry, t2t_hparams
from t2t_repro.hparam import HParamsError
from t2t_repro.learning_rate import (
    T2TSchedule,
    check_schedule,
    learning_rate_at,
    t2t_global_step,
)
from t2t_repro.learning_rate_legacy import learning_rate_warmup

REFERENCE = np.load(
    Path(__file__).parent / "data" / "t2t_reference" / "t2t_1.15.7_learning_rates.npz"
)
META = json.loads(str(REFERENCE["settings"]))
STEPS = REFERENCE["steps"]
RELATIVE = 1e-6


def t2t_values(name: str) -> np.ndarray:
    return REFERENCE["values"][META["order"].index(name)]


def our_hparams(name: str) -> dict:
    setting = META["settings"][name]
    hp = registry.hparams(setting["set"])
    hp.add_hparam("train_steps", META["train_steps"])
    for key, value in setting["overrides"].items():
        if key in hp:
            hp.set_hparam(key, value)
        else:
            hp.add_hparam(key, value)  # piecewise's lists, as T2T's distillation sets add them
    return hp.values()


def has_cosine(hp: dict) -> bool:
    return "cos" in hp["learning_rate_schedule"] or hp["learning_rate_decay_scheme"] == "cosine"


SCHEDULES = [n for n, s in META["settings"].items() if "warmup" not in s and not s["error"]]


def test_the_reference_covers_every_factor_scheme_and_warmup():
    hps = [our_hparams(name) for name in SCHEDULES]
    factors = {f.strip() for hp in hps for f in hp["learning_rate_schedule"].split("*")}
    from t2t_repro.learning_rate import FACTORS
    from t2t_repro.learning_rate_legacy import DECAY_SCHEMES

    assert factors == set(FACTORS)
    legacy = [hp for hp in hps if "legacy" in hp["learning_rate_schedule"]]
    schemes = {hp["learning_rate_decay_scheme"] for hp in legacy}
    assert schemes >= set(DECAY_SCHEMES) - {""}
    assert {s.get("warmup") for s in META["settings"].values()} >= {"exp", "linear"}
    assert STEPS[0] == 0 and STEPS[-1] == 120000 and len(STEPS) > 250


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_is_t2ts(name):
    hp = our_hparams(name)
    ours = learning_rate_at(tf.constant(STEPS), hp).numpy().astype(np.float64)
    t2t = t2t_values(name).astype(np.float64)
    slack = 2.0**-23 * t2t.max() if has_cosine(hp) else 0.0
    bound = RELATIVE * np.abs(t2t) + slack
    worst = int(np.argmax(np.abs(ours - t2t) - bound))
    assert np.all(np.abs(ours - t2t) <= bound), (name, STEPS[worst], ours[worst], t2t[worst])


@pytest.mark.parametrize("name", ["warmup_exp", "warmup_linear"])
def test_warmups_are_t2ts(name):
    setting = META["settings"][name]
    steps = tf.cast(tf.constant(STEPS), tf.float32)
    ours = learning_rate_warmup(steps, setting["warmup_steps"], setting["warmup"]).numpy()
    t2t = t2t_values(name)
    assert np.all(np.abs(ours - t2t) <= RELATIVE * np.abs(t2t)), name


def test_the_four_settings_that_differed_silently():
    """The issue's numbers: T2T's at the issue's steps (T2T's reference gives them)."""
    at = {int(s): i for i, s in enumerate(STEPS)}
    linear = learning_rate_at(97500, our_hparams("linear_decay"))
    assert float(linear) == pytest.approx(0.0032, rel=0.01)
    assert float(linear) == pytest.approx(t2t_values("linear_decay")[at[97500]], rel=RELATIVE)
    assert float(learning_rate_at(50000, our_hparams("cosdecay_50k"))) == 0.0
    assert t2t_values("cosdecay_50k")[at[50000]] == 0.0
    # the decay hparams are stored, recorded and read
    hp = registry.hparams("transformer_base")
    assert json.loads(hp.to_json())["learning_rate_decay_steps"] == 5000
    assert t2t_hparams.TABLE["learning_rate_decay_steps"].meaning == t2t_hparams.HONOURED
    # T2T's Adam correction is case-sensitive
    adam = dict(our_hparams("transformer_base_v1"), optimizer="adam")
    big_a = our_hparams("legacy_noam_Adam")
    ratio = float(learning_rate_at(5000, big_a)) / float(learning_rate_at(5000, adam))
    assert ratio == pytest.approx(500.0, rel=RELATIVE)


def test_cyclelinear10x_is_refused_as_t2t_cannot_run_it():
    assert "float()" in META["settings"]["legacy_cyclelinear10x"]["error"]
    with pytest.raises(HParamsError, match="^learning_rate_decay_scheme='cyclelinear10x' is ref"):
        check_schedule(our_hparams("legacy_cyclelinear10x"))


def test_multistep_update_is_applied_at_t2ts_global_step():
    """T2T's MultistepAdam applies update u at global step u*n + n-1; the Keras schedule,
    called with the updates applied, takes T2T's rate there."""
    assert [t2t_global_step(u, 8) for u in (0, 1, 5)] == [7, 15, 47]
    assert [t2t_global_step(u, n) for u in (0, 3) for n in (0, 1)] == [0, 0, 3, 3]
    hp = our_hparams("multistep8_v3")
    schedule = T2TSchedule(hp)
    for update in (0, 999, 12345):
        expected = learning_rate_at(8 * update + 7, hp)
        assert float(schedule(tf.constant(update, tf.int64))) == float(expected)
    plain = registry.hparams("transformer_base").values()  # no accumulation: bit-identical
    assert float(T2TSchedule(plain)(tf.constant(4321, tf.int64))) == float(
        learning_rate_at(4321, plain)
    )


@pytest.mark.parametrize(
    "overrides,message",
    [
        (
            {"learning_rate_schedule": "constant*single_cycle_cos_decay", "train_steps": 10},
            "single_cycle_cos_decay needs train_steps > learning_rate_warmup_steps",
        ),
        (
            {"learning_rate_schedule": "legacy", "learning_rate_decay_scheme": "piecewise"},
            "reads the lists learning_rate_boundaries and learning_rate_multiples",
        ),
        (
            {"learning_rate_schedule": "constant*cosdecay", "learning_rate_decay_steps": 0},
            "divides by learning_rate_decay_steps",
        ),
        (
            {"learning_rate_schedule": "legacy", "learning_rate_decay_scheme": "linear"},
            "is not one of T2T's decay schemes",
        ),
    ],
)
def test_schedules_t2t_cannot_run_are_refused_in_one_line(overrides, message):
    hp = dict(registry.hparams("transformer_base").values(), **overrides)
    with pytest.raises(HParamsError, match=message) as e:
        check_schedule(hp)
    assert "\n" not in str(e.value)


def test_piecewise_lists_go_through_hparams_and_json():
    hp = registry.hparams("transformer_base")
    hp.add_hparam("learning_rate_boundaries", [40000, 60000])
    hp.add_hparam("learning_rate_multiples", [0.1, 0.01])
    hp.parse("learning_rate_boundaries=[100, 200],learning_rate_schedule=legacy")
    hp.parse("learning_rate_decay_scheme=piecewise,learning_rate_warmup_steps=0")
    assert hp.learning_rate_boundaries == [100, 200]
    again = type(hp).from_json(hp.to_json())
    assert again.learning_rate_multiples == [0.1, 0.01]
    values = again.values()
    rates = [float(learning_rate_at(s, values)) for s in (100, 101, 200, 201, 5000)]
    base = 0.2 * 0.002  # learning_rate times T2T's Adam correction
    assert rates == pytest.approx([base, base * 0.1, base * 0.1, base * 0.01, base * 0.01])
    with pytest.raises(HParamsError, match="takes a list"):
        hp.parse("learning_rate_boundaries=100")


def test_noam_with_no_warmup_is_t2ts_inverse_square_root():
    """T2T's legacy noam with learning_rate_warmup_steps=0: float32 0**-1.5 is inf, so the
    minimum is (step+1)**-0.5 (T2T 1.15.7 printed 0.044194, 0.03125, 0.000494 at steps 0, 1
    and 8000 for transformer_base_v1); it raised ZeroDivisionError here."""
    hp = dict(registry.hparams("transformer_base_v1").values(), learning_rate_warmup_steps=0)
    check_schedule(hp)
    for step in (0, 1, 8000):
        want = 5000.0 * 512**-0.5 * (step + 1) ** -0.5 * 0.1 * 0.002  # lr 0.1, Adam's 0.002
        assert float(learning_rate_at(step, hp)) == pytest.approx(want, rel=RELATIVE)
