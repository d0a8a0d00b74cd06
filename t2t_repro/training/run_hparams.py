"""The hparams a training run trains with: its set, the problem's hparams, the hparams its
output_dir saved, its overrides and its ``--train_steps``, in T2T's order.

Why its own module: it is the one step of the trainer's start-up that reads the output_dir's
record and the problem's vocabulary (``output_dir.py`` keeps the record itself); the trainer
calls it inside a watched start-up stage.
"""

from __future__ import annotations

from t2t_repro.decoding.split_decoding import check_split_decodable
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib import checks as hparams_checks
from t2t_repro.hparams_lib.build import create_hparams, model_hparams_for_problem
from t2t_repro.hparams_lib.renamed import former_hparams, former_note
from t2t_repro.training.config import READ_ONLY_SCHEDULES, TrainerConfig
from t2t_repro.training.output_dir import changes_note, kept_note, saved_changes, saved_hparams


def _with_train_steps(hp, train_steps: int):
    """The run's hparams record its --train_steps (T2T's hparams.json has it too)."""
    if "train_steps" not in hp:
        hp.add_hparam("train_steps", train_steps)
    hp.set_hparam("train_steps", train_steps)
    return hp


def run_hparams(cfg: TrainerConfig, problem) -> HParams:
    """The run's hparams, as T2T's ``create_hparams`` (``utils/hparams_lib.py``) makes them:
    the set, the output_dir's saved ``hparams.json`` over it, then ``--hparams``. A rerun that
    changes saved values, or keeps saved values its set would change, says so in one line
    (``output_dir.py``); a run saved before its set's values changed says that instead."""
    saved = saved_hparams(cfg.output_dir)
    saved_json = saved.to_json() if saved is not None else None
    # T2T's create_hparams: the problem's hparams(defaults, model_hparams) sees the run's
    # model hparams (set, saved json, overrides), none of its own.
    model_hparams = model_hparams_for_problem(
        cfg.hparams_set, cfg.hparams, saved_json=saved_json, data_dir=cfg.data_dir
    )
    problem_hparams = problem.problem_hparams(cfg.data_dir, model_hparams)
    fresh = create_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams)
    source = f"--hparams_set={cfg.hparams_set}"
    hparams_checks.check_transformer_names(fresh, source)
    if saved is None:
        hparams_checks.validate(fresh, source, training=True)
        _check_decodes(cfg, fresh)
        return _with_train_steps(fresh, cfg.train_steps)
    if cfg.schedule in READ_ONLY_SCHEDULES:
        hp = saved.parse(cfg.hparams)
        _check_variable_layout(cfg, saved, hp)
        if cfg.hparams:
            hparams_checks.check_transformer_names(hp, "--hparams")
            hparams_checks.validate(hp, "--hparams")
        _check_decodes(cfg, hp)
        return hp
    hp = create_hparams(cfg.hparams_set, cfg.hparams, saved_json=saved_json, **problem_hparams)
    hp = _with_train_steps(hp, cfg.train_steps)
    _check_variable_layout(cfg, saved, hp)
    hparams_checks.check_transformer_names(hp, "the saved hparams.json and --hparams")
    hparams_checks.validate(hp, "the saved hparams.json and --hparams", training=True)
    _tell_differences(cfg, saved, _with_train_steps(fresh, cfg.train_steps), hp, problem_hparams)
    _check_decodes(cfg, hp)
    return hp


def _check_variable_layout(cfg: TrainerConfig, saved, hp) -> None:
    """One line when --hparams changes ``attention_variables_3d`` over a saved run: T2T names
    the attention's variables by it (``q/kernel`` or ``q``), so its checkpoints cannot be
    restored across the change; here the kernels keep their shapes and would be read with
    another meaning."""
    name = "attention_variables_3d"
    before, after = bool(saved.get(name, False)), bool(hp.get(name, False))
    if before != after:
        raise HParamsError(
            f"--hparams={name}={after} over the run saved in {cfg.output_dir} ({name}={before}): "
            "T2T names the attention variables by it, so its checkpoints cannot be restored "
            "across the change; train it in a new --output_dir."
        )


def _check_decodes(cfg: TrainerConfig, hp) -> None:
    """A decode schedule's split decodes refused before any work, as ``t2t-decoder``'s."""
    if cfg.schedule in ("decode", "train_eval_and_decode"):
        check_split_decodable(hp)


def _tell_differences(cfg: TrainerConfig, saved, fresh, hp, problem_hparams: dict) -> None:
    """One line for the values --hparams changes, one for the saved values the set would
    change (or, for a run saved under its set's former meaning, ``former_note``)."""
    changed = saved_changes(saved, hp, cfg.hparams_set)
    if changed:
        print(changes_note(cfg.output_dir, changed), flush=True)
    kept = saved_changes(saved, fresh, cfg.hparams_set)
    kept = {n: v for n, v in kept.items() if n not in changed}
    if not kept:
        return
    former = former_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams)
    if former is not None and not saved_changes(
        saved, _with_train_steps(former, cfg.train_steps), cfg.hparams_set
    ):
        print(former_note(cfg.output_dir, cfg.hparams_set), flush=True)
    else:
        print(kept_note(cfg.output_dir, kept, cfg.hparams_set), flush=True)
