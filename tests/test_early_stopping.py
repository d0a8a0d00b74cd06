"""Early stopping with T2T's four --eval_early_stopping_* flags (#34)."""

import pytest

from t2t_repro.errors import UserError
from t2t_repro.training.early_stopping import check_metric, has_plateaued
from tests.tools import TINY_TRAINING

TINY = TINY_TRAINING


@pytest.mark.parametrize(
    "values, num_steps, delta, minimize, expected",
    [
        ([5.0, 4.95, 4.93], 200, 0.1, True, 100),  # improved by less than 0.1 since step 100
        ([5.0, 4.95, 4.93], 250, 0.1, True, None),  # no evaluation 250 steps before step 300
        ([5.0, 4.75, 4.93], 200, 0.25, True, None),  # improving by delta counts
        ([5.0, 4.95, 4.93], 100, 0.1, True, 200),  # counted from the last eval >= 100 steps ago
        ([20.0, 20.05, 19.0], 200, 0.1, False, 100),  # increases by less than 0.1
        ([20.0, 20.2, 19.0], 200, 0.1, False, None),
        ([3.0, 3.0, 3.0], 200, 0.0, True, None),  # delta 0: no change is not a plateau (T2T)
    ],
)
def test_plateau_is_t2ts_rule(values, num_steps, delta, minimize, expected):
    assert has_plateaued([100, 200, 300], values, num_steps, delta, minimize) == expected
    assert has_plateaued([100], values[:1], 1, delta, minimize) is None


def test_metric_names():
    assert check_metric("metrics-translate_toy/targets/accuracy", ()) == "accuracy"  # T2T's tag
    assert check_metric("bleu", ("bleu",)) == "bleu"
    with pytest.raises(UserError, match=r"needs --eval_decode_examples > 0\)\.$"):
        check_metric("bleu", ())
    with pytest.raises(UserError, match="use bleu"):
        check_metric("metrics-wmt/targets/approx_bleu_score", ("bleu",))
    with pytest.raises(UserError, match="report loss, neg_log_perplexity, .*, parse_f1"):
        check_metric("f1", ("parse_f1",))


def test_flags_parse_as_t2ts_and_unusable_values_are_refused(tmp_path, capsys):
    from t2t_repro.commands import trainer

    parse = trainer.build_parser().parse_args
    args = parse(["--eval_early_stopping_steps=300", "--eval_early_stopping_metric_delta=0.5"])
    assert (args.eval_early_stopping_steps, args.eval_early_stopping_metric_delta) == (300, 0.5)
    assert (args.eval_early_stopping_metric, args.eval_early_stopping_metric_minimize) == (
        "loss",
        True,
    )
    off = ("--eval_early_stopping_metric_minimize=false", "--noeval_early_stopping_metric_minimize")
    for flag in off:
        assert parse([flag]).eval_early_stopping_metric_minimize is False
    assert parse(["--eval_early_stopping_metric_minimize"]).eval_early_stopping_metric_minimize

    base = [
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--data_dir={tmp_path}",
        f"--output_dir={tmp_path / 'train'}",
    ]
    for flags, expected in [
        (["--eval_early_stopping_steps=10", "--schedule=train"], "--schedule=train_and_evaluate"),
        (["--eval_early_stopping_steps=0"], "must be at least 1"),
        (["--warm_start_from=x", "--schedule=evaluate"], "--schedule=evaluate trains nothing"),
    ]:
        assert trainer.main(base + flags) == 1
        assert expected in capsys.readouterr().err
    assert not (tmp_path / "train").exists()
    # The schedules that evaluate in the training loop take it, T2T's default one too.
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.run_setup import check_config

    for schedule in ("train_and_evaluate", "train_eval_and_decode", "continuous_train_and_eval"):
        check_config(
            TrainerConfig(
                "translate_toy",
                "transformer_quickstart",
                "d",
                "o",
                schedule=schedule,
                eval_early_stopping_steps=10,
            )
        )


@pytest.mark.slow
def test_a_plateau_stops_the_run_which_saves_says_why_and_resumes_counting(tmp_path, capsys):
    """A delta no evaluation can reach: the run stops at the first evaluation 10 steps after
    another; resumed with a maximised metric, it counts the evaluations before the resume."""
    from t2t_repro import registry
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.trainer import Trainer

    registry.problem("translate_toy").generate_data(
        str(tmp_path / "data"), str(tmp_path / "tmp"), progress=False
    )
    out = tmp_path / "train"

    def run(**flags):
        cfg = TrainerConfig(
            problem="translate_toy",
            hparams_set="transformer_quickstart",
            data_dir=str(tmp_path / "data"),
            output_dir=str(out),
            hparams=TINY,
            train_steps=100,
            local_eval_frequency=5,
            steps_per_loop=5,
            eval_steps=2,
            attention_images=False,
            eval_decode_examples=0,
            eval_early_stopping_steps=10,
            eval_early_stopping_metric_delta=1e9,
            **flags,
        )
        return Trainer(cfg).run(), capsys.readouterr().out

    result, log = run()
    assert result["early_stopped"] and result["step"] == 15
    assert result["checkpoint"] == str(out / "ckpt-15") and (out / "ckpt-15.index").exists()
    [line] = [x for x in log.splitlines() if x.startswith("stopped early")]
    assert line.startswith(
        "stopped early at step 15: dev loss has not decreased by 1e+09 or more in the 10 steps "
        "since step 5 (loss "
    )
    assert "; best " in line and line.endswith(f"saved {out / 'ckpt-15'}")
    result, log = run(
        eval_early_stopping_metric="accuracy", eval_early_stopping_metric_minimize=False
    )
    assert result["early_stopped"] and result["step"] == 20  # not 30: steps 5-15 count
    assert "dev accuracy has not increased by 1e+09 or more in the 10 steps since step 10" in log
