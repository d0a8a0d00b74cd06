"""Averages the model weights of the last n checkpoints (the paper: 5 for base, 20 for big).

Only the model's weights are averaged: optimizer slots and step counters are not (the paper
averages the model to decode with it). The result is a model-only checkpoint named after the
newest averaged step, written under temporary names and renamed, with the ``checkpoint``
state file replaced last, so an interrupted run never leaves a half-written average.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import tensorflow as tf

from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.model_loading import MODEL_KEY, CheckpointError, load_trained_model, restore_model

_STEP = re.compile(r"ckpt-(\d+)$")


def checkpoints_by_step(model_dir: str) -> list[tuple[int, str]]:
    """(step, prefix) of every checkpoint the directory's state file lists, oldest first."""
    state = tf.train.get_checkpoint_state(model_dir)
    if state is None:
        raise CheckpointError(f"No checkpoints in {model_dir!r} (no 'checkpoint' state file). "
                              "Train first with t2t-trainer --output_dir=<that dir>.")
    found = []
    for path in state.all_model_checkpoint_paths:
        path = path if os.path.isabs(path) else os.path.join(model_dir, path)
        match = _STEP.search(path)
        if match and tf.io.gfile.exists(path + ".index"):
            found.append((int(match.group(1)), path))
    return sorted(found)


def average_checkpoints(model_dir: str, output_dir: str, n: int = 8,
                        model_name: str = "transformer", log=None) -> str:
    """Writes the average of the last ``n`` checkpoints; returns the new checkpoint prefix."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    checkpoints = checkpoints_by_step(model_dir)[-n:]
    if not checkpoints:
        raise CheckpointError(f"No readable checkpoints listed in {model_dir!r}.")
    if len(checkpoints) < n:
        log(f"warning: only {len(checkpoints)} checkpoint(s) available; averaging those "
            f"instead of {n}.")
    model = load_trained_model(model_dir, model_name=model_name, restore=False).model
    sums = None
    for step, path in checkpoints:
        restore_model(model, path)
        values = [w.numpy().astype(np.float64) for w in model.weights]
        sums = values if sums is None else [s + v for s, v in zip(sums, values)]
        log(f"read {path}")
    for weight, total in zip(model.weights, sums):
        weight.assign(tf.cast(total / len(checkpoints), weight.dtype))
    newest = checkpoints[-1][0]
    return _write_model_checkpoint(model, output_dir, newest)


def _write_model_checkpoint(model, output_dir: str, step: int) -> str:
    os.makedirs(output_dir, exist_ok=True)
    final = os.path.join(output_dir, f"ckpt-{step}")
    tmp = os.path.join(output_dir, f".tmp-ckpt-{step}")
    written = tf.train.Checkpoint(**{MODEL_KEY: model}).write(tmp)
    for name in os.listdir(output_dir):
        if name.startswith(os.path.basename(written)):
            suffix = name[len(os.path.basename(written)):]
            os.replace(os.path.join(output_dir, name), final + suffix)
    state = (f'model_checkpoint_path: "ckpt-{step}"\n'
             f'all_model_checkpoint_paths: "ckpt-{step}"\n')
    write_text_atomically(os.path.join(output_dir, "checkpoint"), state)
    return final
