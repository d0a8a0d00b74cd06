"""Early stopping with T2T's four --eval_early_stopping_* flags (#34)."""

import pytest

from t2t_repro.errors import UserError
from t2t_repro.training.loop.early_stopping import check_metric, has_plateaued
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
        (
            ["--eval_early_stopping_steps=10", "--schedule=train", "--local_eval_frequency=0"],
            "--schedule=train_and_evaluate or train_eval_and_decode or continuous_train_and_eval "
            "or train with --local_eval_frequency > 0",
        ),
        (
            ["--eval_early_stopping_steps=10", "--schedule=continuous_eval"],
            "give the flag to the --schedule=train job",
        ),
        (["--eval_early_stopping_steps=0"], "must be at least 1"),
        (["--warm_start_from=x", "--schedule=evaluate"], "--schedule=evaluate trains nothing"),
    ]:
        assert trainer.main(base + flags) == 1
        assert expected in capsys.readouterr().err
    assert not (tmp_path / "train").exists()
    # The schedules that evaluate in the training loop take it, T2T's default one too, and
    # --schedule=train (another job's eval events).
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.run_setup import check_config

    schedules = (
        "train_and_evaluate",
        "train_eval_and_decode",
        "continuous_train_and_eval",
        "train",
    )
    for schedule in schedules:
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


@pytest.mark.slow
def test_train_schedule_stops_on_the_eval_events_of_a_continuous_eval_job(tmp_path, capsys):
    """--schedule=train reads, every --local_eval_frequency steps, the eval events that a
    separate --schedule=continuous_eval job writes to output_dir/eval (written here with the
    trainer's own event writer, as that job writes them; T2T's EarlyStoppingHook): it stops
    once they show no improvement, and trains on while they improve."""
    from t2t_repro import registry
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.loop.summaries import Summaries
    from t2t_repro.training.trainer import Trainer

    registry.problem("translate_toy").generate_data(
        str(tmp_path / "data"), str(tmp_path / "tmp"), progress=False
    )

    def run(name, losses):
        out = tmp_path / name
        evals = Summaries(str(out))  # the continuous_eval job's writer
        for step, loss in losses.items():
            evals.scalars("eval", {"loss": loss, "accuracy": 0.1}, step)
        cfg = TrainerConfig(
            problem="translate_toy",
            hparams_set="transformer_quickstart",
            data_dir=str(tmp_path / "data"),
            output_dir=str(out),
            hparams=TINY,
            schedule="train",
            train_steps=10,
            local_eval_frequency=5,
            steps_per_loop=5,
            attention_images=False,
            eval_early_stopping_steps=5,
            eval_early_stopping_metric="metrics-translate_toy/targets/loss",
        )
        return Trainer(cfg).run(), capsys.readouterr().out, out

    result, log, out = run("plateau", {5: 5.0, 10: 4.95})
    assert result["early_stopped"] and result["checkpoint"] == str(out / "ckpt-5")
    [line] = [x for x in log.splitlines() if x.startswith("stopped early")]
    assert line.startswith(
        "stopped early at step 5: dev loss has not decreased by 0.1 or more in the 5 steps "
        "since step 5 (loss 5.0000 there; best 4.9500 at step 10;"
    )
    result, log, out = run("improving", {5: 5.0, 10: 4.5})
    assert "early_stopped" not in result and result["checkpoint"] == str(out / "ckpt-10")
    assert "stopped early" not in log
