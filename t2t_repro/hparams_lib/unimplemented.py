"""Hparams that keep T2T's names and defaults but have only some of T2T's values implemented
here: any other value is refused in one line, so that a ``--hparams`` string or a usr_dir set
written for T2T never trains or decodes something else than it asks for. Which values, and
why, is the table of T2T's hparams (``t2t_repro/t2t_hparams.py``: the names the sets store
with ``values``).
"""

from __future__ import annotations

from t2t_repro import t2t_hparams
from t2t_repro.hparam import HParams, HParamsError

# The stored names with only some values implemented (the table's ``values``).
CHECKED = tuple(
    name for name, entry in t2t_hparams.TABLE.items() if entry.stored and entry.values is not None
)


def check_implemented(hp: HParams, source: str = "hparams") -> None:
    """HParamsError (one line) for a value of a ``CHECKED`` hparam that is not implemented
    here."""
    for name in CHECKED:
        if name not in hp:
            continue
        refusal = t2t_hparams.refusal(name, hp.get(name))
        if refusal:
            raise HParamsError(f"{source}: {refusal}")
