"""The hparams a training run trains with: its set, the problem's hparams, its overrides and
its ``--train_steps``, checked against those its output_dir saved.

Why its own module: it is the one step of the trainer's start-up that reads the output_dir's
record and the problem's vocabulary (``output_dir.py`` keeps the record itself); the trainer
calls it inside a watched start-up stage.
"""

from __future__ import annotations

from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib import checks as hparams_checks
from t2t_repro.hparams_lib.build import create_hparams, model_hparams_for_problem
from t2t_repro.hparams_lib.renamed import former_hparams
from t2t_repro.training.config import READ_ONLY_SCHEDULES, TrainerConfig
from t2t_repro.training.output_dir import check_saved, saved_hparams


def _with_train_steps(hp, train_steps: int):
    """The run's hparams record its --train_steps (T2T's hparams.json has it too)."""
    if "train_steps" not in hp:
        hp.add_hparam("train_steps", train_steps)
    hp.set_hparam("train_steps", train_steps)
    return hp


def run_hparams(cfg: TrainerConfig, problem) -> HParams:
    """The run's hparams; a read-only schedule takes the saved ones with --hparams over them
    (T2T's order), a rerun must match them
    (``output_dir.check_saved``, which also accepts a run saved before its set's values
    changed)."""
    saved = saved_hparams(cfg.output_dir)
    # T2T's create_hparams: the problem's hparams(defaults, model_hparams) sees the run's
    # model hparams (set, saved json, overrides), none of its own.
    model_hparams = model_hparams_for_problem(cfg.hparams_set, cfg.hparams, data_dir=cfg.data_dir)
    problem_hparams = problem.problem_hparams(cfg.data_dir, model_hparams)
    hp = _with_train_steps(
        create_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams), cfg.train_steps
    )
    hparams_checks.check_transformer_names(hp, f"--hparams_set={cfg.hparams_set}")
    hparams_checks.validate(hp, f"--hparams_set={cfg.hparams_set}", training=True)
    if cfg.schedule in READ_ONLY_SCHEDULES and saved is not None:
        # T2T's create_hparams (utils/hparams_lib.py): the saved hparams.json, then --hparams
        hp = saved.parse(cfg.hparams)
        if cfg.hparams:
            hparams_checks.check_transformer_names(hp, "--hparams")
            hparams_checks.validate(hp, "--hparams")
    elif saved is not None:  # a run saved before its set's values changed resumes
        former = former_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams)
        if former is not None:
            former = _with_train_steps(former, cfg.train_steps)
        hp = check_saved(cfg.output_dir, hp, cfg.hparams_set, former)
    return hp
