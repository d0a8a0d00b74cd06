"""The training output_dir's record of a run: ``hparams.json`` and ``flags.txt``.

Written here; read back by ``t2t_repro.checkpoints.loading.saved_hparams`` (the one reader).

A rerun in the same output_dir must continue the same experiment: its hparams are compared
with the saved ones and any difference is refused with the list of what differs, instead of
silently mixing two configurations in one set of checkpoints.
"""

from __future__ import annotations

import os

from t2t_repro import fileio, registry
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.checkpoints.loading import HPARAMS_FILE, saved_hparams
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.build import PROBLEM_HPARAMS
from t2t_repro.hparams_lib.renamed import former_note, renamed_hint

FLAGS_FILE = "flags.txt"


def _saved_diff(saved: HParams, hparams: HParams, hparams_set: str) -> dict:
    """What differs between the saved run and ``hparams``, less what is the same experiment."""
    diff = saved.diff(hparams)
    diff.pop("train_steps", None)  # Training longer is the same experiment.
    for name in PROBLEM_HPARAMS:  # a problem hparam added since that run (same data)
        if name in diff and name not in saved:
            del diff[name]
    # An hparam added to the project since that run was saved, at its default, is too.
    for defaults in (registry.hparams("basic_1"), registry.hparams(hparams_set)):
        for name in [n for n in diff if n not in saved and n in defaults]:
            if hparams.get(name) == defaults.get(name):
                del diff[name]
    return diff


def check_saved(
    output_dir: str,
    hparams: HParams,
    hparams_set: str = "basic_1",
    former: HParams | None = None,
) -> HParams:
    """Refuses a run whose hparams differ from those saved in ``output_dir`` (writes nothing);
    returns the hparams to run with.

    An hparam the saved run lacks is accepted at its default in ``basic_1`` or in
    ``hparams_set`` (the run's set): it was added to the project after that run was saved.
    ``former``: what ``hparams_set`` gave before its values changed
    (``hparams_lib/renamed.py``); a run saved with those resumes with them, in one line."""
    saved = saved_hparams(output_dir)
    if saved is None:
        return hparams
    diff = _saved_diff(saved, hparams, hparams_set)
    if diff and former is not None and not _saved_diff(saved, former, hparams_set):
        print(former_note(output_dir, hparams_set), flush=True)
        return former
    if diff:
        lines = "\n".join(
            f"  {name}: saved {old!r}, now {new!r}" for name, (old, new) in diff.items()
        )
        raise HParamsError(
            f"{output_dir} holds a run with other hparams{renamed_hint(hparams_set)}:\n"
            f"{lines}\nUse a new --output_dir for a new experiment, or rerun with the saved "
            f"hparams (see {os.path.join(output_dir, HPARAMS_FILE)})."
        )
    return hparams


def write_record(output_dir: str, hparams: HParams, flags: dict) -> None:
    """Writes hparams.json (for a new run) and flags.txt: only once every check passed."""
    fileio.makedirs(output_dir)
    if saved_hparams(output_dir) is None:
        write_text_atomically(os.path.join(output_dir, HPARAMS_FILE), hparams.to_json() + "\n")
    write_text_atomically(
        os.path.join(output_dir, FLAGS_FILE),
        "".join(f"--{k}={v}\n" for k, v in sorted(flags.items())),
    )
