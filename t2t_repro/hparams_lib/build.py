"""Builds the hparams a run uses: the registered set, the problem's sizes, then overrides.

Order follows T2T (``tensor2tensor/utils/hparams_lib.py``, ``create_hparams``): set -> saved
``hparams.json`` (when resuming) -> ``--hparams`` overrides. The problem contributes its
hparams (``Problem.problem_hparams``: vocabulary sizes, target space id, the loss multiplier
and, for targets that fill the input's words, ``target_slot_ids``), which the model reads; this
is the one place problems and models meet. As in T2T, the problem is asked with the model
hparams of the run (``create_run_hparams``): a T2T problem's ``hparams(defaults,
model_hparams)`` may read them.
"""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparam import HParams

# What a problem may contribute. ``target_slot_ids`` (``"first:end"``): the target ids that
# each fill one input word (the model's ``slot_signal`` reads it); only problems with such
# targets give it. ``loss_multiplier``: T2T's problem hparam of that name, the factor of the
# training loss (``utils/t2t_model.py``, ``T2TModel._loss_single``); only problems whose
# factor is not 1 give it. ``has_input``: T2T's ``T2TModel.has_input``, given (False) only by a
# problem without inputs (a language model: the model is the decoder alone).
# ``class_label_target``: T2T's problem hparam ``modality["targets"]`` is CLASS_LABEL, given
# (True) only by a text classifier (``Text2ClassProblem``: ``transformer_encoder``'s target),
# and with ``multi_label_target`` (True) by one whose target is MULTI_LABEL (label lists: T2T's
# ``multi_label_loss`` and ``weights_nonzero``).
PROBLEM_HPARAMS = (
    "input_vocab_size",
    "target_vocab_size",
    "target_space_id",
    "target_slot_ids",
    "loss_multiplier",
    "has_input",
    "class_label_target",
    "multi_label_target",
)


# This project's own hparams that its sets no longer have: a run's saved hparams.json may
# still hold them (``checkpoints/loading.py``, ``saved_hparams``, drops them), and nothing reads
# them. ``max_position_embeddings``: the rows of pos=emb's one table, before learned positions
# became T2T's tables of max_length rows.
RETIRED_HPARAMS = ("max_position_embeddings",)


def add_problem_hparams(
    hp: HParams,
    input_vocab_size: int,
    target_vocab_size: int,
    target_space_id: int = 0,
    **extra,
) -> HParams:
    """Sets the problem's hparams on ``hp``; ``extra`` ones (``PROBLEM_HPARAMS``) only when
    the problem has them (not None or "")."""
    unknown = sorted(set(extra) - set(PROBLEM_HPARAMS))
    if unknown:
        raise TypeError(f"{unknown} are not problem hparams {PROBLEM_HPARAMS}")
    values = dict(
        input_vocab_size=input_vocab_size,
        target_vocab_size=target_vocab_size,
        target_space_id=target_space_id,
        **{k: v for k, v in extra.items() if v is not None and v != ""},
    )
    for name, value in values.items():
        if name in hp:
            hp.set_hparam(name, value)
        else:
            hp.add_hparam(name, value)
    return hp


def create_hparams(
    hparams_set: str,
    overrides: str = "",
    *,
    input_vocab_size: int | None = None,
    target_vocab_size: int | None = None,
    target_space_id: int = 0,
    saved_json: str | None = None,
    **problem_hparams,
) -> HParams:
    """The registered set, plus the problem's hparams (sizes and ``PROBLEM_HPARAMS``), plus a
    saved hparams.json, plus overrides."""
    hp = registry.hparams(hparams_set)
    if input_vocab_size is not None:
        add_problem_hparams(
            hp,
            input_vocab_size,
            target_vocab_size or input_vocab_size,
            target_space_id,
            **problem_hparams,
        )
    if saved_json is not None:
        hp.override_from_json(saved_json)
    return hp.parse(overrides)


def model_hparams_for_problem(
    hparams_set: str, overrides: str = "", *, saved_json: str | None = None, data_dir: str = ""
) -> HParams:
    """The model hparams a problem is asked with: the set, a saved hparams.json and the
    overrides, and ``data_dir``, none of the problem's own, as T2T's ``create_hparams``
    (``utils/hparams_lib.py``) has them when it calls ``add_problem_hparams``. A copy: what
    the problem does to it changes nothing of the run."""
    hp = create_hparams(
        hparams_set, overrides, input_vocab_size=1, target_vocab_size=1, saved_json=saved_json
    )
    for name in PROBLEM_HPARAMS:
        if name in hp:
            hp.del_hparam(name)
    if data_dir and "data_dir" not in hp:
        hp.add_hparam("data_dir", data_dir)
    return hp


def create_run_hparams(
    problem, data_dir: str, hparams_set: str, overrides: str = "", saved_json: str | None = None
) -> HParams:
    """``create_hparams`` with ``problem``'s hparams (``problem.problem_hparams(data_dir,
    model_hparams)``), the problem asked with ``model_hparams_for_problem``."""
    model_hparams = model_hparams_for_problem(
        hparams_set, overrides, saved_json=saved_json, data_dir=data_dir
    )
    return create_hparams(
        hparams_set,
        overrides,
        saved_json=saved_json,
        **problem.problem_hparams(data_dir, model_hparams),
    )


def check_hparams(hparams_set: str, overrides: str = "") -> HParams:
    """Fails (RegistryError/HParamsError) on an unknown set or a bad override without reading
    any file: the problem's sizes are stand-ins here, only names and types are checked.
    Returns those hparams (for checks of the set's own values, before any file is read)."""
    return create_hparams(hparams_set, overrides, input_vocab_size=1, target_vocab_size=1)
