"""Learning-rate values against T2T's schedules
(``tensor2tensor/utils/learning_rate.py``, ``learning_rate_schedule``)."""

import pytest

from t2t_repro import registry
from t2t_repro.learning_rate import learning_rate_at
from t2t_repro.optimizers import make_optimizer

# step -> expected lr: T2T's formulas evaluated at these steps (3 significant digits).
TABLE = {
    "transformer_base_v1": {
        1000: "1.75e-4",
        4000: "6.99e-4",
        8000: "4.94e-4",
        16000: "3.49e-4",
        100000: "1.40e-4",
        300000: "8.07e-5",
    },
    "transformer_base_v2": {
        1000: "1.24e-4",
        4000: "4.94e-4",
        8000: "9.88e-4",
        16000: "6.99e-4",
        100000: "2.80e-4",
        300000: "1.61e-4",
    },
    "transformer_base_v3": {
        1000: "1.24e-4",
        4000: "4.94e-4",
        8000: "9.88e-4",
        16000: "6.99e-4",
        100000: "2.80e-4",
        300000: "1.61e-4",
    },
    "transformer_big_v3": {
        1000: "8.7e-5",
        4000: "3.49e-4",
        8000: "6.99e-4",
        16000: "4.94e-4",
        100000: "1.98e-4",
        300000: "1.14e-4",
    },
    "transformer_base_single_gpu": {
        1000: "4.9e-5",
        4000: "1.98e-4",
        8000: "3.95e-4",
        16000: "7.91e-4",
        100000: "3.16e-4",
        300000: "1.83e-4",
    },
}


def half_unit_in_last_place(printed: str) -> float:
    """Tolerance implied by how many digits the table prints: "4.9e-5" -> 0.05e-5."""
    mantissa, exponent = printed.split("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10 ** (int(exponent) - decimals) * 1.001


@pytest.mark.parametrize("hparams_set", sorted(TABLE))
def test_schedule_matches_t2t_table(hparams_set):
    hp = registry.hparams(hparams_set).values()
    for step, expected in TABLE[hparams_set].items():
        # The table's "step" counts updates; T2T's s is the 0-based step before the update.
        value = float(learning_rate_at(step, hp))
        assert abs(value - float(expected)) <= half_unit_in_last_place(expected), (step, value)


def test_paper_formula_exactly():
    hp = registry.hparams("transformer_base_v1").values()
    for step in (0, 1, 3999, 4000, 123456):
        s = step + 1
        paper = 512**-0.5 * min(s**-0.5, s * 4000**-1.5)
        assert float(learning_rate_at(step, hp)) == pytest.approx(paper, rel=1e-6)


def test_v3_first_update_has_zero_lr():
    assert float(learning_rate_at(0, registry.hparams("transformer_base_v3").values())) == 0.0


def test_unknown_factor_is_a_clear_error():
    hp = registry.hparams("transformer_base_v3")
    hp.learning_rate_schedule = "constant*warmupp"
    with pytest.raises(ValueError, match="Unknown learning-rate factor 'warmupp'"):
        make_optimizer(hp)


def test_adam_uses_hparams():
    opt = make_optimizer(registry.hparams("transformer_base_v1"))
    assert (opt.beta_1, opt.beta_2, opt.epsilon) == (0.9, 0.98, 1e-9)
