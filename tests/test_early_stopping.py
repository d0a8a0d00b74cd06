"""Early stopping with T2T's four --eval_early_stopping_* flags (#34), by T2T 1.15's rule per
--schedule (#47): ValidationMonitor's early_stopping_rounds on train_and_evaluate,
EarlyStoppingHook's has_metric_plateaued elsewhere. Expected values are worked out by hand
from T2T's code (tensor2tensor/utils/metrics_hook.py, has_metric_plateaued;
tf.contrib.learn's monitors.py, ValidationMonitor.every_n_step_end)."""

import pytest

from t2t_repro.errors import UserError
from t2t_repro.training.loop.early_stopping import (
    EarlyStopping,
    check_metric,
    has_plateaued,
    rounds_since_best,
)
from tests.model_utils import shared_toy_data
from tests.tools import TINY_PLUMBING

TINY = TINY_PLUMBING


# The runs check when and why training stops and what it says.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


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


@pytest.mark.parametrize(
    "values, rounds, minimize, expected",
    [
        # ValidationMonitor: best = a strictly better value (< / >), no delta; stop once the
        # newest step - the best's step >= early_stopping_rounds.
        ([5.0, 4.95, 4.93], 200, True, None),  # each improves (the plateau rule stops here)
        ([5.0, 5.0, 5.0], 200, True, 100),  # a tie is no improvement: best stays at 100
        ([5.0, 5.0, 5.0], 250, True, None),  # 300 - 100 < 250
        ([5.0, 4.0, 4.5], 100, True, 200),
        ([5.0, 4.0, 4.5], 150, True, None),
        ([0.1, 0.3, 0.2], 100, False, 200),  # maximised
        ([0.1, 0.3, 0.2], 100, True, 100),  # minimised: 0.1 at step 100 stays the best
    ],
)
def test_validation_monitor_rule(values, rounds, minimize, expected):
    assert rounds_since_best([100, 200, 300], values, rounds, minimize) == expected
    assert rounds_since_best([100], values[:1], 1, minimize) is None  # 100 - 100 < 1


def test_each_schedule_gets_t2ts_rule_and_history():
    """train_and_evaluate: ValidationMonitor (the job's own evaluations, in memory); the other
    schedules: the hook's rule, with the evaluations before a resume read from eval/."""
    from types import SimpleNamespace

    from t2t_repro.builtin.problems.base import Problem
    from t2t_repro.training.loop.early_stopping import make_early_stopping

    def stopper(schedule):
        cfg = SimpleNamespace(
            schedule=schedule,
            eval_early_stopping_steps=200,
            eval_early_stopping_metric="loss",
            eval_early_stopping_metric_delta=0.1,
            eval_early_stopping_metric_minimize=True,
            eval_decode_examples=0,
        )
        return make_early_stopping(cfg, Problem(), None)

    monitor = stopper("train_and_evaluate")
    assert monitor.monitor
    for step, loss in [(100, 5.0), (200, 4.95)]:
        assert not monitor.update(step, {"loss": loss})
    assert not monitor.update(300, {"loss": 4.93})  # the hook's rule would stop here
    assert monitor.update(500, {"loss": 4.93})  # a tie: 500 - 300 >= 200
    assert "in the 200 steps since its best evaluation of this job, at step 300" in (
        monitor.reason()
    )
    for schedule in ("train", "train_eval_and_decode", "continuous_train_and_eval"):
        hook = stopper(schedule)
        assert not hook.monitor
        for step, loss in [(100, 5.0), (200, 4.95)]:
            assert not hook.update(step, {"loss": loss})
        assert hook.update(300, {"loss": 4.93}) and hook.since == 100


def test_resume_history_per_rule(tmp_path):
    """A resumed hook-rule run counts the evaluations in eval/ up to its step; a resumed
    ValidationMonitor run starts afresh (T2T's monitor keeps its best in memory)."""
    from t2t_repro.training.loop.summaries import Summaries

    evals = Summaries(str(tmp_path))
    for step, loss in [(100, 5.0), (200, 4.9375), (300, 4.0)]:  # float32-exact
        evals.scalars("eval", {"loss": loss}, step)
    hook = EarlyStopping("loss", 200, 0.1, True)
    hook.read_history(str(tmp_path), 200)
    assert (hook.steps, hook.values) == ([100, 200], [5.0, 4.9375])
    assert hook.update(300, {"loss": 4.93}) and hook.since == 100
    monitor = EarlyStopping("loss", 200, 0.1, True, monitor=True)
    monitor.read_history(str(tmp_path), 200)
    assert monitor.steps == [] and not monitor.update(300, {"loss": 4.93})


def test_train_schedule_reads_t2ts_eval_dirs_then_its_own(tmp_path):
    """--schedule=train polls <output_dir>/eval_continuous (T2T's EarlyStoppingHook's
    events_dir), then eval_eval (where T2T 1.15's continuous_eval writes: Estimator's eval_dir
    for name "eval"), then eval (this project's continuous_eval): the first holding the metric,
    under T2T's tag or this project's name. The T2T events are simple_value events as T2T's
    writes them (ScalarEventFile); this project's its Summaries writer."""
    from t2t_repro.metrics.bleu_per_step import ScalarEventFile
    from t2t_repro.training.loop.summaries import Summaries

    out = str(tmp_path)
    poll = EarlyStopping("accuracy", 200, 0.1, False)
    assert not poll.poll(out) and poll.steps == []  # no events yet: T2T's hook trains on
    own = Summaries(out)  # improving by 0.1 or more: no plateau
    for step, acc in [(100, 0.1), (200, 0.2), (300, 0.3)]:
        own.scalars("eval", {"accuracy": acc, "loss": 1.0}, step)
    assert not poll.poll(out) and poll.steps == [100, 200, 300]
    t2t_eval = ScalarEventFile(str(tmp_path / "eval_eval"))  # plateaued
    for step, acc in [(100, 0.1), (200, 0.15), (300, 0.19)]:
        t2t_eval.write(step, 0.0, {"metrics-translate_toy/targets/accuracy": acc})
    t2t_eval.close()
    assert poll.poll(out) and poll.since == 100 and poll.values == pytest.approx([0.1, 0.15, 0.19])
    t2t_hook_dir = ScalarEventFile(str(tmp_path / "eval_continuous"))  # loss only: not it
    t2t_hook_dir.write(100, 0.0, {"loss": 3.0})
    t2t_hook_dir.close()
    assert poll.poll(out) and poll.since == 100  # still eval_eval's accuracy
    t2t_hook_dir = ScalarEventFile(str(tmp_path / "eval_continuous"))
    for step, acc in [(100, 0.1), (200, 0.5), (300, 0.9)]:
        t2t_hook_dir.write(step, 0.0, {"metrics-translate_toy/targets/accuracy": acc})
    t2t_hook_dir.close()
    assert not poll.poll(out) and poll.values == pytest.approx([0.1, 0.5, 0.9])


def test_metric_names():
    assert check_metric("metrics-translate_toy/targets/accuracy", ()) == "accuracy"  # T2T's tag
    assert check_metric("bleu", ("bleu",)) == "bleu"
    with pytest.raises(UserError, match=r"needs --eval_decode_examples > 0\)\.$"):
        check_metric("bleu", ())
    # T2T's teacher-forced approx_bleu_score is its own figure, when the problem lists it.
    tag = "metrics-wmt/targets/approx_bleu_score"
    assert check_metric(tag, ("bleu",), ("approx_bleu_score",)) == "approx_bleu_score"
    with pytest.raises(UserError, match="report loss, .*, bleu"):
        check_metric(tag, ("bleu",))
    with pytest.raises(UserError, match="report loss, neg_log_perplexity, .*, parse_f1"):
        check_metric("f1", ("parse_f1",))
    # The teacher-forced metrics a problem lists (T2T's eval_metrics), under T2T's tags too.
    listed = ("accuracy_top5", "rouge_L_fscore")
    assert check_metric("metrics-summ/targets/rouge_L_fscore", (), listed) == "rouge_L_fscore"
    with pytest.raises(UserError, match="accuracy_per_sequence, accuracy_top5, rouge_L_fscore"):
        check_metric("rouge_2_fscore", (), listed)


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
def test_train_and_evaluate_stops_by_validation_monitor_says_why_and_resumes_afresh(
    tmp_path, capsys
):
    """train_and_evaluate stops by ValidationMonitor's rule. With learning rate 0 every
    evaluation gives the same figures, so none is strictly better than the job's first: the
    run stops at the first evaluation 5 steps after it (step 10, evaluations at 5, 10);
    resumed, the monitor starts afresh (its best lives in memory): evaluations at 15, 20, stop
    at 20, where the hook's rule with the earlier evaluations would have stopped at 15."""
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.trainer import Trainer

    data = shared_toy_data()
    out = tmp_path / "train"

    def run(**flags):
        cfg = TrainerConfig(
            problem="translate_toy",
            hparams_set="transformer_quickstart",
            data_dir=str(data),
            output_dir=str(out),
            # SGD: at learning rate 0 Adam's update is 0 too; SGD's traces in fewer ops.
            hparams=f"{TINY},learning_rate=0.0,learning_rate_constant=0.0,optimizer=SGD",
            train_steps=100,
            local_eval_frequency=5,
            steps_per_loop=5,
            eval_steps=2,
            attention_images=False,
            eval_decode_examples=0,
            eval_early_stopping_steps=5,
            schedule="train_and_evaluate",
            **flags,
        )
        return Trainer(cfg).run(), capsys.readouterr().out

    result, log = run()
    assert result["early_stopped"] and result["step"] == 10
    assert result["checkpoint"] == str(out / "ckpt-10") and (out / "ckpt-10.index").exists()
    [line] = [x for x in log.splitlines() if x.startswith("stopped early")]
    assert line.startswith(
        "stopped early at step 10: dev loss has not decreased in the 5 steps since its best "
        "evaluation of this job, at step 5 (loss "
    )
    assert line.endswith(f"saved {out / 'ckpt-10'}")
    result, log = run(
        eval_early_stopping_metric="accuracy", eval_early_stopping_metric_minimize=False
    )
    assert result["early_stopped"] and result["step"] == 20  # not 15: steps 5-10 do not count
    assert (
        "dev accuracy has not increased in the 5 steps since its best evaluation of this "
        "job, at step 15" in log
    )


@pytest.mark.slow
def test_train_schedule_stops_on_the_eval_events_of_a_continuous_eval_job(
    tmp_path, capsys, monkeypatch
):
    """--schedule=train reads, every --local_eval_frequency steps, the eval events that a
    separate --schedule=continuous_eval job writes to output_dir/eval_eval (written here with the
    trainer's own event writer, as that job writes them; T2T's EarlyStoppingHook): it trains
    on while they improve, and stops once they show no improvement. One run shows both: the
    job evaluates each checkpoint the trainer saves before the trainer polls (one run's
    trace, not two runs')."""
    import tensorflow as tf

    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.loop.summaries import Summaries
    from t2t_repro.training.trainer import Trainer

    data = shared_toy_data()
    out = tmp_path / "train"
    evals = Summaries(str(out))  # the continuous_eval job's writer
    losses = {5: 5.0, 10: 4.5, 15: 4.45}  # improving by 0.5, then by less than 0.1
    polls = []
    poll = EarlyStopping.poll

    def job_then_poll(self, output_dir):
        """The job's evaluation of the newest checkpoint, then the trainer's poll."""
        step = int(tf.train.latest_checkpoint(output_dir).rsplit("-", 1)[1])
        evals.scalars("eval_eval", {"loss": losses[step], "accuracy": 0.1}, step)
        polls.append((step, poll(self, output_dir)))
        return polls[-1][1]

    monkeypatch.setattr(EarlyStopping, "poll", job_then_poll)
    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        data_dir=str(data),
        output_dir=str(out),
        hparams=f"{TINY},optimizer=SGD",  # the losses are the job's above, not the run's
        schedule="train",
        train_steps=20,
        local_eval_frequency=5,
        steps_per_loop=5,
        attention_images=False,
        eval_early_stopping_steps=5,
        eval_early_stopping_metric="metrics-translate_toy/targets/loss",
    )
    result, log = Trainer(cfg).run(), capsys.readouterr().out
    # One evaluation: no plateau yet; improved by 0.1 or more: trains on; then plateaued.
    assert polls == [(5, False), (10, False), (15, True)]
    assert result["early_stopped"] and result["checkpoint"] == str(out / "ckpt-15")
    [line] = [x for x in log.splitlines() if x.startswith("stopped early")]
    assert line.startswith(
        "stopped early at step 15: dev loss has not decreased by 0.1 or more in the 5 steps "
        "since step 10 (loss 4.5000 there; best 4.4500 at step 15;"
    )
