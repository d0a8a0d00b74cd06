"""Builds the hparams a run uses: the registered set, the problem's sizes, then overrides.

Order follows T2T (``tensor2tensor/utils/hparams_lib.py``, ``create_hparams``): set -> saved
``hparams.json`` (when resuming) -> ``--hparams`` overrides. The problem contributes its
hparams (``Problem.problem_hparams``: vocabulary sizes, target space id and, for targets that
fill the input's words, ``target_slot_ids``), which the model reads; this is the one place
problems and models meet.
"""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparam import HParams

# What a problem may contribute. ``target_slot_ids`` (``"first:end"``): the target ids that
# each fill one input word (the model's ``slot_signal`` reads it); only problems with such
# targets give it.
PROBLEM_HPARAMS = ("input_vocab_size", "target_vocab_size", "target_space_id", "target_slot_ids")


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


def check_hparams(hparams_set: str, overrides: str = "") -> None:
    """Fails (RegistryError/HParamsError) on an unknown set or a bad override without reading
    any file: the problem's sizes are stand-ins here, only names and types are checked."""
    create_hparams(hparams_set, overrides, input_vocab_size=1, target_vocab_size=1)
