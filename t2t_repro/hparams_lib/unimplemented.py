"""Hparams that keep T2T's names and defaults but have only some of T2T's values implemented
here: any other value is refused in one line, so that a ``--hparams`` string or a usr_dir set
written for T2T never trains or decodes something else than it asks for. Which values, and
why, is the table of T2T's hparams (``t2t_repro/t2t_hparams.py``: the names the sets store
with ``values``); the names that only change training are refused only when training.
"""

from __future__ import annotations

from t2t_repro import t2t_hparams
from t2t_repro.hparam import HParams, HParamsError

# The stored names with only some values implemented (the table's ``values``).
CHECKED = tuple(
    name for name, entry in t2t_hparams.TABLE.items() if entry.stored and entry.values is not None
)


def check_implemented(hp: HParams, source: str = "hparams", training: bool = False) -> None:
    """HParamsError (one line) for a value of a ``CHECKED`` hparam that is not implemented
    here (a training-only one only when ``training``)."""
    for name in CHECKED:
        if name not in hp:
            continue
        if name == "initializer_gain" and hp.get("initializer") == "xavier":
            continue  # T2T's xavier ignores the gain
        refusal = t2t_hparams.refusal(name, hp.get(name), training)
        if refusal:
            raise HParamsError(f"{source}: {refusal}")
