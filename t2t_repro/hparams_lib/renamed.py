"""Registered set names whose values changed, and how a run saved before resumes.

Until issue #47, ``transformer_base``, ``transformer_big`` and ``transformer_big_enfr`` were
the paper's sets here; they are now T2T 1.15's (``hparams/transformer.py``), and the paper's
are ``transformer_base_v1``, ``transformer_big_v1`` and ``transformer_big_enfr_v1``.
``transformer_parsing_big`` untied its softmax, which T2T's set does not. A run's
``hparams.json`` holds every value it trained with, so a run saved under a former meaning is
recognised by its values and resumes with them, saying so in one line
(``training/output_dir.py``).
"""

from __future__ import annotations

from t2t_repro.hparam import HParams, join_overrides
from t2t_repro.hparams_lib.build import create_hparams

# name: (the set that now has the former values, the overrides that give them)
FORMER_MEANINGS = {
    "transformer_base": ("transformer_base_v1", ""),
    "transformer_big": ("transformer_big_v1", ""),
    "transformer_big_enfr": ("transformer_big_enfr_v1", ""),
    "transformer_parsing_big": (
        "transformer_parsing_big",
        "shared_embedding_and_softmax_weights=False",
    ),
}


def former_hparams(hparams_set: str, overrides: str = "", **problem_hparams) -> HParams | None:
    """What ``--hparams_set=hparams_set --hparams=overrides`` gave before the set's values
    changed; None for a set whose values never did."""
    if hparams_set not in FORMER_MEANINGS:
        return None
    set_name, former = FORMER_MEANINGS[hparams_set]
    return create_hparams(set_name, join_overrides(former, overrides), **problem_hparams)


def former_note(output_dir: str, hparams_set: str) -> str:
    """The one line a run resumed under its set's former meaning prints."""
    set_name, former = FORMER_MEANINGS[hparams_set]
    now = f"--hparams_set={set_name}" + (f' --hparams="{former},..."' if former else "")
    return (
        f"note: {output_dir} was trained with --hparams_set={hparams_set} as it was before "
        f"that name meant T2T 1.15's set; it resumes with its saved hparams ({now} gives "
        "them from now on)."
    )
