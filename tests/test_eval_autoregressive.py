"""T2T's ``eval_run_autoregressive`` against T2T 1.15.7 itself.

T2T's evaluation of three tiny train dirs it made (a relative-attention seq2seq model, a
language model and a text classifier), by ``T2TModel.eval_autoregressive`` and its metric
functions, was recorded by ``tools/t2t_reference/make_t2t_eval_autoregressive_reference.py``
(README there). Here the imported models evaluate the same batches through the trainer's
evaluation: the loss (the last greedy step's) and the metrics equal T2T's. They read every
decoded logit at a gold position (``neg_log_perplexity`` its value, the accuracies its argmax)
and the decode's length (past it the zero padding counts log(V)): so the greedy decode is
T2T's, EOS ending only a one-row batch when the problem says ``stop_at_eos``.
"""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.builtin.problems.base import Problem
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.training.config import TrainerConfig
from t2t_repro.training.loop import autoregressive_eval
from t2t_repro.training.loop.eval_round import EvalRound
from t2t_repro.training.loop.evaluation import evaluate
from t2t_repro.training.output_dir import saved_hparams
from t2t_repro.training.run_setup import TrainingError, check_config
from tests.t2t_fixtures import REFERENCE, reference, shared_import

T2T = reference("t2t_1.15.7_eval_autoregressive.npz")
DIRS = {  # case -> (T2T's train dir, this project's model)
    "seq2seq": ("t2t_relative_train_dir", "transformer"),
    "one_row_eos": ("t2t_relative_train_dir", "transformer"),
    "one_row_no_eos": ("t2t_relative_train_dir", "transformer"),
    "lm": ("t2t_lm_train_dir", "transformer"),
    "lm_one_row_eos": ("t2t_lm_train_dir", "transformer"),  # T2T decodes nothing: loss 0
    "classifier": ("t2t_classifier_train_dir", "transformer_encoder"),
}


@pytest.fixture(scope="module")
def models():
    """Each train dir imported once, its hparams asking for the autoregressive evaluation."""
    built = {}
    for dir_name, model_name in set(DIRS.values()):
        out, _ = shared_import(REFERENCE / dir_name)  # the run's one import of it (read only)
        hparams = saved_hparams(str(out))
        hparams.set_hparam("eval_run_autoregressive", True)
        model = registry.model(model_name)(hparams)
        restore_model(model, str(out))
        built[dir_name] = model
    return built


def _case(name: str) -> tuple[tf.data.Dataset, dict]:
    """The case's batch as a dataset whose batch size is unknown (one trace serves both
    one-row and three-row batches), and T2T's values."""
    t2t = {k.split("/", 1)[1]: v for k, v in T2T.items() if k.startswith(name + "/")}
    targets = t2t["targets"]
    inputs = t2t.get("inputs", np.zeros([len(targets), 0], np.int32))
    batch = {"inputs": inputs, "targets": targets}
    return tf.data.Dataset.from_tensor_slices(batch).batch(len(targets)), t2t


@pytest.mark.parametrize(
    "names",
    [("seq2seq", "one_row_eos"), ("one_row_no_eos",), ("lm", "lm_one_row_eos"), ("classifier",)],
)
def test_loss_and_metrics_equal_t2t(models, names):
    """The greedy logits' length is T2T's, else the padded positions' log(V) would move
    ``neg_log_perplexity``; their values are, else the loss and metrics would move."""
    model = models[DIRS[names[0]][0]]
    problem = _Problem(bool(T2T[names[0] + "/stop_at_eos"]))
    step = _round(model, problem).eval_fn  # the trainer's, with the problem's stop_at_eos
    for name in names:
        dataset, t2t = _case(name)
        got = evaluate(step, dataset)
        assert got["loss"] == pytest.approx(float(t2t["loss"]), abs=1e-5), name
        assert got["accuracy"] == pytest.approx(float(t2t["accuracy"]), abs=1e-6), name
        per_sequence = float(t2t["accuracy_per_sequence"])
        assert got["accuracy_per_sequence"] == pytest.approx(per_sequence, abs=1e-6), name
        nlp = float(t2t["neg_log_perplexity"])
        assert got["neg_log_perplexity"] == pytest.approx(nlp, rel=1e-5), name


def _round(model, problem, schedule="train_and_evaluate", strategy=None, **hparams):
    """An ``EvalRound`` of a stand-in trainer: only what it reads before any evaluation."""
    hp = model.hparams.copy()
    for name, value in hparams.items():
        hp.set_hparam(name, value) if name in hp else hp.add_hparam(name, value)
    cfg = SimpleNamespace(schedule=schedule, data_dir="", eval_use_test_set=False)
    trainer = SimpleNamespace(
        problem=problem,
        hparams=hp,
        model=model,
        cfg=cfg,
        strategy=strategy or tf.distribute.get_strategy(),
        cluster=SimpleNamespace(workers=1),
    )
    return EvalRound(trainer)


class _Problem(Problem):
    """A stand-in problem whose ``stop_at_eos`` is given."""

    def __init__(self, stop_at_eos: bool = True) -> None:
        self._stop_at_eos = stop_at_eos

    def stop_at_eos(self, data_dir: str, hparams=None) -> bool:
        return self._stop_at_eos

    def teacher_forced_metrics(self) -> tuple:
        return ()


def test_what_it_cannot_run_is_refused_in_one_line_before_training(models):
    model = models["t2t_relative_train_dir"]
    problem = _Problem()
    assert Problem.stop_at_eos(problem, "") is True  # T2T's Text2TextProblem's
    # T2T's own problems: their hparams() say (an algorithmic one leaves Problem's False)
    assert registry.problem("algorithmic_identity_binary40").stop_at_eos("") is False
    assert _round(model, problem)._stop_at_eos()  # accepted; one replica: EOS ends one row
    # T2T pads a batch to a multiple of its shards: with two, never one row to stop
    two = SimpleNamespace(num_replicas_in_sync=2)
    assert not _round(model, problem, strategy=two)._stop_at_eos()
    for hparams, why in (
        ({"prepend_mode": "prepend_inputs_masked_attention"}, "prepend_mode"),
        ({"sampling_method": "random", "sampling_temp": 0.0}, "divides the logits by 0"),
        ({"pack_dataset": True}, "packed eval records"),
    ):
        with pytest.raises(TrainingError, match=why) as error:
            _round(model, problem, **hparams)
        assert "\n" not in str(error.value)
    _round(model, problem, schedule="train", prepend_mode="prepend_inputs_masked_attention")
    multi_label = autoregressive_eval.refusal(model.hparams, packed=False, multi_label=True)
    assert "T2T's own evaluation fails" in multi_label and "\n" not in multi_label


def test_the_set_or_hparams_are_refused_before_generate_data_writes():
    config = TrainerConfig(
        "translate_toy",
        "transformer_tiny",
        "d",
        "o",
        hparams="eval_run_autoregressive=true,sampling_method=random,sampling_temp=0.0",
    )
    with pytest.raises(TrainingError, match="divides the logits by 0"):
        check_config(config)
    check_config(dataclasses.replace(config, schedule="train"))  # no evaluation: accepted
