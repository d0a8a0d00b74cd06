"""The training output_dir's record of a run: ``hparams.json`` and ``flags.txt``.

Written here; read back by ``t2t_repro.checkpoints.loading.saved_hparams`` (the one reader).

A rerun in the same output_dir reads its hparams as T2T's ``create_hparams`` does (the set,
the saved ``hparams.json`` over it, then ``--hparams``): nothing is refused, but every value
``--hparams`` changes and every saved value that differs from the set is named in one line,
and ``hparams.json`` is rewritten when it changed, as T2T's ``save_metadata`` rewrites it.
"""

from __future__ import annotations

import os

from t2t_repro import fileio, registry
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.checkpoints.loading import HPARAMS_FILE, saved_hparams
from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.build import PROBLEM_HPARAMS

FLAGS_FILE = "flags.txt"


def read_flags(output_dir: str) -> dict[str, str]:
    """A run's flags.txt as {name: value} (lines not ``--name=value`` skipped); {} without
    one. Other tools find what the run was (its --model, --problem, --data_dir) there."""
    path = os.path.join(output_dir, FLAGS_FILE)
    if not fileio.isfile(path):
        return {}
    with fileio.open(path, encoding="utf-8") as f:
        pairs = [line.strip()[2:].split("=", 1) for line in f if line.startswith("--")]
    return {pair[0]: pair[1] for pair in pairs if len(pair) == 2}


def saved_changes(saved: HParams, hparams: HParams, hparams_set: str = "basic_1") -> dict:
    """{name: (saved value, value now)} where ``hparams`` differ from the saved run's, less
    what keeps the same experiment."""
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


def changes_note(output_dir: str, changed: dict) -> str:
    """The line a rerun prints when --hparams changes values its output_dir saved."""
    values = ", ".join(f"{name} {old!r} -> {new!r}" for name, (old, new) in sorted(changed.items()))
    return (
        f"note: --hparams changes the hparams saved in {output_dir}: {values}; the run goes "
        f"on with them and {HPARAMS_FILE} is rewritten (T2T's order: {HPARAMS_FILE}, then "
        "--hparams)."
    )


def kept_note(output_dir: str, kept: dict, hparams_set: str) -> str:
    """The line a rerun prints when the saved run's values differ from its set's (and
    --hparams does not set them): they are kept, as T2T reads hparams.json over the set."""
    names = ", ".join(sorted(kept))
    return (
        f"note: {output_dir} keeps its saved {names} (T2T reads {HPARAMS_FILE} over "
        f"--hparams_set={hparams_set}; --hparams changes them)."
    )


def write_record(output_dir: str, hparams: HParams, flags: dict) -> None:
    """Writes hparams.json (for a new run, or a rerun that changed it) and flags.txt: only
    once every check passed."""
    fileio.makedirs(output_dir)
    saved = saved_hparams(output_dir)
    if saved is None or saved.diff(hparams):
        write_text_atomically(os.path.join(output_dir, HPARAMS_FILE), hparams.to_json() + "\n")
    write_text_atomically(
        os.path.join(output_dir, FLAGS_FILE),
        "".join(f"--{k}={v}\n" for k, v in sorted(flags.items())),
    )
