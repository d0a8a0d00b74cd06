"""Averages the model weights of the last n checkpoints (the paper: 5 for base, 20 for big).

Only the model's weights are averaged: optimizer slots and step counters are not (the paper
averages the model to decode with it). The result is a model-only checkpoint named after the
newest averaged step, written under temporary names and renamed, with the ``checkpoint``
state file replaced last, so an interrupted run never leaves a half-written average.

It never overwrites or removes a checkpoint it did not write: the output directory must be
new or hold only earlier averages (marked by ``averaged_from.txt``), and an existing
``ckpt-N`` there is not replaced: kept when it is already the average asked for (a rerun;
T2T's ``t2t-avg-all`` writes the same average again), refused when it averaged others.
The checkpoints averaged are the complete ones on disk (a garbled state file does not hide
them); any the state file lists but that are incomplete are named as skipped.

``average_sliding_windows`` is T2T's ``t2t-avg-all``: one such average per checkpoint step
(and the same rule for those already there).
"""

from __future__ import annotations

import collections
import os
import re
import sys

import numpy as np
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import MODEL_KEY, load_trained_model, restore_model
from t2t_repro.step_files import follow_steps

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
    suggestion = f"use --output_dir={os.path.join(model_dir, 'avg')}"
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
        if n == "hparams.json"
        # (its own directory holds the run's flags.txt, copied as T2T's t2t-avg-all does)
        or (not ours and (n in ("flags.txt", checkpoint_files.STATE_FILE) or n.startswith("ckpt-")))
    ]
    if theirs:
        raise CheckpointError(
            f"--output_dir={output_dir} holds checkpoints or a training run "
            f"({', '.join(sorted(theirs)[:3])}) that t2t-avg-all did not "
            f"write; {suggestion}, or another new directory."
        )


def is_current_average(output_dir: str, step: int, sources: list[str]) -> bool:
    """Whether ``output_dir/ckpt-<step>`` is the average of ``sources`` as they are now: the
    marker lists exactly them for it (its last line for that step) and none that is still
    there was written after it. The time is its data file's: the sliding window dates the
    .index like its newest source (T2T), which says nothing of when it was written."""
    marker, head = os.path.join(output_dir, MARKER), f"ckpt-{step}: "
    data = [n for n in fileio.listdir(output_dir) if n.startswith(f"ckpt-{step}.data-")]
    if not fileio.exists(marker) or not data:
        return False
    with fileio.open(marker, encoding="utf-8") as f:
        lines = [line.rstrip("\n")[len(head) :] for line in f if line.startswith(head)]
    if not lines:
        return False
    listed = lines[-1].split(" ")  # as written; a path with a space matches whole
    same = lines[-1] == " ".join(sources) or (
        len(listed) == len(sources)
        and all(fileio.same_path(a, b) for a, b in zip(listed, sources, strict=True))
    )
    written = min(fileio.getmtime(os.path.join(output_dir, n)) for n in data)
    return same and all(_mtime(s + ".index") <= written for s in sources)


def _mtime(path: str) -> float:
    """``path``'s modification time; 0 once it is gone (training removed it: not rewritten)."""
    try:
        return fileio.getmtime(path)
    except OSError:
        return 0.0


def _existing_average(output_dir: str, step: int, sources: list[str], log) -> str | None:
    """``output_dir/ckpt-<step>`` when it is already the average of ``sources`` (kept, said
    in one line); None when there is none; refused when it averaged other checkpoints."""
    final = os.path.join(output_dir, f"ckpt-{step}")
    if not fileio.exists(final + ".index"):
        return None
    names = ", ".join(os.path.basename(p) for p in sources)
    if is_current_average(output_dir, step, sources):
        log(f"{final} is already the average of {names}; kept")
        if not any(
            fileio.same_path(p, final) for p in checkpoint_files.read_state(output_dir).listed
        ):
            _list_in_state(output_dir, final)  # a write stopped before the state file
        return final
    raise CheckpointError(
        f"{output_dir} already holds ckpt-{step}, an earlier average of other checkpoints "
        f"than {names} (or of them before they were rewritten); not replacing it. Remove it "
        "or choose another --output_dir."
    )


def average_checkpoints(
    model_dir: str,
    output_dir: str,
    n: int = 8,
    model_name: str = "transformer",
    log=None,
    max_step: int | None = None,
) -> tuple[str, bool]:
    """Writes the average of the last ``n`` checkpoints (of those at or before ``max_step``,
    if given: e.g. the ones around the best dev score). Returns its checkpoint prefix and
    whether it was written (False: the one already in ``output_dir`` is it, and is kept)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    check_output_dir(model_dir, output_dir)
    found, skipped = checkpoints_by_step(model_dir)
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
    sources = [p for _, p in checkpoints]
    kept = _existing_average(output_dir, newest, sources, log)
    if kept:
        return kept, False
    if skipped:
        log(f"warning: skipped {', '.join(skipped)}: listed in the state file but incomplete.")
    if len(checkpoints) < n:
        log(
            f"warning: only {len(checkpoints)} checkpoint(s) available; averaging those "
            f"instead of {n}."
        )
    log(f"averaging {', '.join(os.path.basename(p) for p in sources)}")
    model = load_trained_model(model_dir, model_name=model_name, restore=False).model
    _average_into(model, sources, log)
    return _write_model_checkpoint(model, output_dir, newest, sources), True


def average_sliding_windows(
    model_dir: str,
    output_dir: str,
    n: int = 8,
    model_name: str = "transformer",
    *,
    min_steps: int = 0,
    wait_minutes: float = 0,
    log=None,
) -> list[str]:
    """T2T's ``t2t-avg-all`` (``tensor2tensor/bin/t2t_avg_all.py``): for every checkpoint
    from the n-th on (steps >= ``min_steps``), the average of it and the n-1 before it, as
    ``output_dir/ckpt-<its step>`` with its .index dated like that checkpoint's. With
    ``wait_minutes``, follows a running job (``step_files.follow_steps``). An average
    already in ``output_dir`` is kept when it is that window's, so a rerun continues, and
    refused when it averaged others. Returns the prefixes written.

    Each window is summed afresh, oldest first (T2T keeps a running sum, adding the newest
    and subtracting the oldest): so the newest window is bit for bit what
    :func:`average_checkpoints` writes, and no rounding drifts along a long run."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    check_output_dir(model_dir, output_dir)
    if not wait_minutes:
        checkpoints_by_step(model_dir)  # the clear errors: no such dir, no checkpoints
    window: collections.deque = collections.deque(maxlen=n)
    model, written, seen = None, [], 0
    follow = follow_steps(
        lambda: checkpoint_files.checkpoint_step_files(model_dir),
        wait_minutes,
        min_steps,
        describe=f"checkpoint in {model_dir}",
        log=log,
    )
    for checkpoint in follow:
        seen += 1
        window.append(checkpoint)
        if len(window) < n:
            continue
        if _existing_average(output_dir, checkpoint.step, [f.path for f in window], log):
            continue
        missing = [f.path for f in window if not checkpoint_files.is_complete(f.path)]
        if missing:
            log(
                f"warning: no average at step {checkpoint.step}: {', '.join(missing)} was "
                f"removed meanwhile (keep more checkpoints than --n={n} in training)"
            )
            continue
        if model is None:
            model = load_trained_model(model_dir, model_name=model_name, restore=False).model
        log(f"averaging {', '.join(os.path.basename(f.path) for f in window)}")
        _average_into(model, [f.path for f in window], log)
        path = _write_model_checkpoint(model, output_dir, checkpoint.step, [f.path for f in window])
        fileio.set_mtime(path + ".index", checkpoint.mtime)  # T2T: os.utime of the .index
        written.append(path)
    if seen < n:
        log(
            f"warning: {seen} checkpoint(s) at step >= {min_steps}; a window needs --n={n}, "
            "so no average was written, as in T2T (--nosliding_window averages those there are)."
        )
    return written


def _average_into(model, paths: list[str], log) -> None:
    """Sets ``model``'s weights to the mean of the checkpoints' (summed in float64, in the
    order given)."""
    sums = None
    for path in paths:
        restore_model(model, path)
        values = [w.numpy().astype(np.float64) for w in model.weights]
        sums = values if sums is None else [s + v for s, v in zip(sums, values, strict=True)]
        log(f"read {path}")
    for weight, total in zip(model.weights, sums, strict=True):
        weight.assign(tf.cast(total / len(paths), weight.dtype))


def _write_model_checkpoint(model, output_dir: str, step: int, sources: list[str]) -> str:
    fileio.makedirs(output_dir)
    with fileio.open(os.path.join(output_dir, MARKER), "a", encoding="utf-8") as f:
        f.write(f"ckpt-{step}: " + " ".join(sources) + "\n")
    # T2T's t2t-avg-all copies the run's flags.txt, dated as it is, so that t2t-bleu dates
    # step 0 by it (bin/t2t_avg_all.py).
    run_flags, flags_copy = (
        os.path.join(d, "flags.txt") for d in (os.path.dirname(sources[0]), output_dir)
    )
    if fileio.isfile(run_flags) and not fileio.exists(flags_copy):
        fileio.copy_dated(run_flags, flags_copy)
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
    _list_in_state(output_dir, final)
    return final


def _list_in_state(output_dir: str, final: str) -> None:
    """Earlier averages stay listed (and on disk); ``final`` is the latest."""
    checkpoint_files.write_state(
        output_dir,
        [p for _, p in checkpoint_files.complete_checkpoints(output_dir) if p != final] + [final],
    )
