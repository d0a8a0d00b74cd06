"""Averages the model weights of the last n checkpoints (the paper: 5 for base, 20 for big).

Only the model's weights are averaged: optimizer slots and step counters are not (the paper
averages the model to decode with it). The result is a model-only checkpoint named after the
newest averaged step, written under temporary names and renamed, with the ``checkpoint``
state file replaced last, so an interrupted run never leaves a half-written average.

It never overwrites or removes a checkpoint it did not write: the output directory must be
new or hold only earlier averages (marked by ``averaged_from.txt``), and an existing
``ckpt-N`` there is not replaced. The checkpoints averaged are the complete ones on disk
(a garbled state file does not hide them); any the state file lists but that are incomplete
are named as skipped.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import MODEL_KEY, load_trained_model, restore_model

_STEP = re.compile(r"ckpt-(\d+)$")
MARKER = "averaged_from.txt"  # written into every output dir; lists the inputs


def checkpoints_by_step(model_dir: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(step, prefix) of every complete checkpoint on disk, oldest first, and a note for
    each one the state file lists that is not complete (skipped)."""
    if not fileio.isdir(model_dir):
        raise CheckpointError(f"--model_dir {model_dir!r} is not a directory.")
    found = checkpoint_files.complete_checkpoints(model_dir)
    complete = {prefix for _, prefix in found}
    skipped = []
    for path in checkpoint_files.read_state(model_dir).listed:
        if path not in complete and _STEP.search(path):
            why = "no .index file" if not fileio.exists(path + ".index") else "data missing"
            skipped.append(f"{os.path.basename(path)} ({why})")
    if not found:
        raise CheckpointError(
            f"No checkpoints in {model_dir!r}. Train first with "
            "t2t-trainer --output_dir=<that dir>."
        )
    return found, skipped


def check_output_dir(model_dir: str, output_dir: str) -> None:
    """Refuses an output dir where the average could replace someone else's checkpoints."""
    suggestion = f"use --output_dir={os.path.join(model_dir, 'avg')} (the default)"
    if fileio.same_path(output_dir, model_dir):
        raise CheckpointError(
            f"--output_dir is the training directory {model_dir}: averaging "
            f"there would replace its checkpoints; {suggestion}."
        )
    if not fileio.exists(output_dir):
        return
    if not fileio.isdir(output_dir):
        raise CheckpointError(f"--output_dir={output_dir} is a file; a directory is expected.")
    names = fileio.listdir(output_dir)
    ours = MARKER in names
    theirs = [
        n
        for n in names
        if n in ("hparams.json", "flags.txt")
        or (not ours and (n.startswith("ckpt-") or n == checkpoint_files.STATE_FILE))
    ]
    if theirs:
        raise CheckpointError(
            f"--output_dir={output_dir} holds checkpoints or a training run "
            f"({', '.join(sorted(theirs)[:3])}) that t2t-avg-all did not "
            f"write; {suggestion}, or another new directory."
        )


def average_checkpoints(
    model_dir: str,
    output_dir: str,
    n: int = 8,
    model_name: str = "transformer",
    log=None,
    max_step: int | None = None,
    min_steps: int = 0,
) -> str:
    """Writes the average of the last ``n`` checkpoints (of those at or before ``max_step``,
    if given: e.g. the ones around the best dev score; checkpoints before step ``min_steps``
    are ignored, T2T's ``--min_steps``); returns the new checkpoint prefix."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    check_output_dir(model_dir, output_dir)
    found, skipped = checkpoints_by_step(model_dir)
    if min_steps:
        newest = found[-1][0]
        found = [(step, path) for step, path in found if step >= min_steps]
        if not found:
            raise CheckpointError(
                f"{model_dir} has no checkpoint at or after step {min_steps} (the newest is "
                f"{newest}); lower --min_steps."
            )
    if max_step is not None:
        newest = found[-1][0]
        found = [(step, path) for step, path in found if step <= max_step]
        if not found:
            raise CheckpointError(
                f"{model_dir} has no checkpoint at or before step {max_step} (the newest is "
                f"{newest}); raise --max_step."
            )
    checkpoints = found[-n:]
    newest = checkpoints[-1][0]
    if fileio.exists(os.path.join(output_dir, f"ckpt-{newest}.index")):
        raise CheckpointError(
            f"{output_dir} already holds ckpt-{newest} (an earlier average); "
            "not replacing it. Remove it or choose another --output_dir."
        )
    if skipped:
        log(f"warning: skipped {', '.join(skipped)}: listed in the state file but incomplete.")
    if len(checkpoints) < n:
        log(
            f"warning: only {len(checkpoints)} checkpoint(s) available; averaging those "
            f"instead of {n}."
        )
    log(f"averaging {', '.join(os.path.basename(p) for _, p in checkpoints)}")
    model = load_trained_model(model_dir, model_name=model_name, restore=False).model
    sums = None
    for _, path in checkpoints:
        restore_model(model, path)
        values = [w.numpy().astype(np.float64) for w in model.weights]
        sums = values if sums is None else [s + v for s, v in zip(sums, values, strict=True)]
        log(f"read {path}")
    for weight, total in zip(model.weights, sums, strict=True):
        weight.assign(tf.cast(total / len(checkpoints), weight.dtype))
    return _write_model_checkpoint(model, output_dir, newest, [p for _, p in checkpoints])


def _write_model_checkpoint(model, output_dir: str, step: int, sources: list[str]) -> str:
    fileio.makedirs(output_dir)
    with fileio.open(os.path.join(output_dir, MARKER), "a", encoding="utf-8") as f:
        f.write(f"ckpt-{step}: " + " ".join(sources) + "\n")
    final = os.path.join(output_dir, f"ckpt-{step}")
    tmp = os.path.join(output_dir, f".tmp-ckpt-{step}")
    written = tf.train.Checkpoint(**{MODEL_KEY: model}).write(tmp)
    # The .index last: a ckpt-N.index on disk means a complete checkpoint.
    names = sorted(
        (n for n in fileio.listdir(output_dir) if n.startswith(os.path.basename(written))),
        key=lambda n: n.endswith(".index"),
    )
    for name in names:
        fileio.replace(
            os.path.join(output_dir, name), final + name[len(os.path.basename(written)) :]
        )
    # Earlier averages stay listed (and on disk); the new one is the latest.
    checkpoint_files.write_state(
        output_dir,
        [p for _, p in checkpoint_files.complete_checkpoints(output_dir) if p != final] + [final],
    )
    return final
