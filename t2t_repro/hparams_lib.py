"""Builds the hparams a run uses: the registered set, the problem's sizes, then overrides.

Order follows T2T (``tensor2tensor/utils/hparams_lib.py``, ``create_hparams``): set -> saved
``hparams.json`` (when resuming) -> ``--hparams`` overrides. The problem contributes vocabulary
sizes and its target space id, which the model reads; this is the one place problems and models
meet.
"""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparam import HParams

PROBLEM_HPARAMS = ("input_vocab_size", "target_vocab_size", "target_space_id")


def add_problem_hparams(
    hp: HParams, input_vocab_size: int, target_vocab_size: int, target_space_id: int = 0
) -> HParams:
    values = dict(
        input_vocab_size=input_vocab_size,
        target_vocab_size=target_vocab_size,
        target_space_id=target_space_id,
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
    target_slot_ids: str = "",
) -> HParams:
    """The registered set, plus problem sizes, plus a saved hparams.json, plus overrides.

    ``target_slot_ids`` (the problem's, ``"first:end"``) is added only when the run asks for
    ``slot_signal``, so runs without it keep the hparams they always had."""
    hp = registry.hparams(hparams_set)
    if input_vocab_size is not None:
        add_problem_hparams(
            hp, input_vocab_size, target_vocab_size or input_vocab_size, target_space_id
        )
    if saved_json is not None:
        hp.override_from_json(saved_json)
    hp = hp.parse(overrides)
    if hp.get("slot_signal", False) and target_slot_ids:
        if "target_slot_ids" in hp:
            hp.set_hparam("target_slot_ids", target_slot_ids)
        else:
            hp.add_hparam("target_slot_ids", target_slot_ids)
    return hp


def check_hparams(hparams_set: str, overrides: str = "") -> None:
    """Fails (RegistryError/HParamsError) on an unknown set or a bad override without reading
    any file: the problem's sizes are stand-ins here, only names and types are checked."""
    create_hparams(hparams_set, overrides, input_vocab_size=1, target_vocab_size=1)
