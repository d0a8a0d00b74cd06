"""Which ``ckpt-N`` checkpoints a directory holds, read from the disk, not only the state file.

The ``checkpoint`` state file is a convenience index: if it is garbled, empty or names a
checkpoint whose files are gone, TensorFlow treats the directory as empty (and a trainer
would start again from step 0 over the existing checkpoints). Every tool therefore lists the
complete checkpoints on disk (``ckpt-N.index`` plus all of its ``.data-XXXXX-of-YYYYY``
shards; TensorFlow writes the index last) and uses the state file only to say what it
disagrees with.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time

from google.protobuf import text_format

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.step_files import StepFile

STATE_FILE = "checkpoint"
_INDEX = re.compile(r"^ckpt-(\d+)\.index$")
_DATA = re.compile(r"\.data-(\d+)-of-(\d+)$")
_TEMP_DIR = re.compile(r"^ckpt-\d+_temp$")


def is_complete(prefix: str, listing: list[str] | None = None) -> bool:
    """``prefix.index`` and every data shard it was written with are on disk. ``listing``:
    the directory's names, when the caller has them (one listing per directory, not per
    checkpoint: each is a round trip on object storage)."""
    directory, base = os.path.split(prefix)
    if listing is None:
        if not fileio.isfile(prefix + ".index"):
            return False
        listing = fileio.listdir(directory or ".")
    elif base + ".index" not in listing:
        return False
    shards, total = set(), None
    for name in listing:
        match = _DATA.search(name)
        if match and name[: match.start()] == base:
            shards.add(int(match.group(1)))
            total = int(match.group(2))
    return total is not None and shards == set(range(total))


def complete_checkpoints(directory: str) -> list[tuple[int, str]]:
    """(step, prefix) of every complete ``ckpt-N`` in ``directory``, oldest first."""
    if not fileio.isdir(directory):
        return []
    found, listing = [], fileio.listdir(directory)
    for name in listing:
        match = _INDEX.match(name)
        prefix = os.path.join(directory, name[: -len(".index")])
        if match and is_complete(prefix, listing):
            found.append((int(match.group(1)), prefix))
    return sorted(found)


def checkpoint_step_files(directory: str) -> list[StepFile]:
    """Every complete ``ckpt-N`` as a :class:`StepFile` (its time: the ``.index`` file's, the
    last written), oldest first: what ``step_files.follow_steps`` follows."""
    found = []
    for step, prefix in complete_checkpoints(directory):
        try:
            index = prefix + ".index"
            found.append(StepFile(prefix, fileio.getmtime(index), step, fileio.getctime(index)))
        except OSError:  # removed since the listing (training's keep_checkpoint_max)
            continue
    return found


@dataclasses.dataclass
class StateFile:
    """What the ``checkpoint`` state file says, or why it cannot be read."""

    latest: str | None = None
    listed: tuple[str, ...] = ()
    problem: str | None = None  # why it is unusable; None when it is fine or absent


def read_state(directory: str) -> StateFile:
    """Parses the state file without TensorFlow's warnings; never raises on bad content."""
    from tensorflow.python.training.checkpoint_state_pb2 import CheckpointState

    path = os.path.join(directory, STATE_FILE)
    if not fileio.isfile(path):
        return StateFile()
    try:
        with fileio.open(path, encoding="utf-8") as f:
            state = text_format.Parse(f.read(), CheckpointState())
    except (OSError, UnicodeDecodeError, text_format.ParseError) as e:
        return StateFile(problem=f"its 'checkpoint' state file is unreadable ({str(e)[:80]})")
    resolve = lambda p: p if os.path.isabs(p) or fileio.is_url(p) else os.path.join(directory, p)  # noqa: E731
    if not state.model_checkpoint_path:
        return StateFile(problem="its 'checkpoint' state file is empty")
    return StateFile(
        resolve(state.model_checkpoint_path),
        tuple(resolve(p) for p in state.all_model_checkpoint_paths),
    )


def latest_checkpoint(directory: str) -> tuple[str | None, str]:
    """The newest complete checkpoint on disk, and a note when the state file disagrees."""
    found = complete_checkpoints(directory)
    state = read_state(directory)
    newest = found[-1][1] if found else None
    if newest is None or state.latest == newest:
        return newest, ""
    name = os.path.basename(newest)
    if state.problem:
        return (
            newest,
            f"{directory}: {state.problem}; using the newest complete checkpoint on disk, {name}.",
        )
    if state.latest is None:
        return (
            newest,
            f"{directory} has no 'checkpoint' state file; using the newest "
            f"complete checkpoint on disk, {name}.",
        )
    return (
        newest,
        f"{directory}: the 'checkpoint' state file names "
        f"{os.path.basename(state.latest)}, but the newest complete checkpoint "
        f"on disk is {name}; using it.",
    )


def write_state(directory: str, prefixes: list[str]) -> None:
    """A state file listing ``prefixes`` (newest last), written to a temp file and renamed.

    Each gets its ``.index`` time, as ``tf.train.CheckpointManager`` records them, and the
    last preserved time is before all of them: a manager reading the file queues every listed
    checkpoint for ``--keep_checkpoint_max``'s deletion (without times it queues none, and the
    old checkpoints were kept for good). An unreadable state file it replaces is kept as
    ``checkpoint.unreadable``.
    """
    path = os.path.join(directory, STATE_FILE)
    if read_state(directory).problem and fileio.exists(path):
        fileio.replace(path, path + ".unreadable")
    names = [os.path.basename(p) for p in prefixes]
    times = []
    for prefix in prefixes:
        index = prefix + ".index"
        times.append(fileio.getmtime(index) if fileio.exists(index) else time.time())
    text = (
        f'model_checkpoint_path: "{names[-1]}"\n'
        + "".join(f'all_model_checkpoint_paths: "{n}"\n' for n in names)
        + "".join(f"all_model_checkpoint_timestamps: {t!r}\n" for t in times)
        + f"last_preserved_timestamp: {min(times) - 1.0!r}\n"
    )
    write_text_atomically(path, text)


def remove_orphan_temp_dirs(directory: str) -> list[str]:
    """Deletes ``ckpt-N_temp/`` folders that a save killed midway left behind."""
    removed = []
    if fileio.isdir(directory):
        for name in sorted(fileio.listdir(directory)):
            path = os.path.join(directory, name)
            if _TEMP_DIR.match(name) and fileio.isdir(path):
                fileio.rmtree(path)
                removed.append(path)
    return removed
