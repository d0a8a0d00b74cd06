"""Following files numbered by training step as they appear (checkpoints, translations).

T2T's tools that evaluate every checkpoint (``t2t-translate-all``, ``t2t-bleu
--translations_dir``, ``t2t-avg-all``) share one iterator,
``tensor2tensor/utils/bleu_hook.py``, ``stepfiles_iterator``: files in step order, oldest
first, those below ``min_steps`` skipped, and with ``wait_minutes`` it keeps polling for a
newer one until none has arrived for that long after the last one's time on disk (so a
finished run's old files end the wait at once, and a running job is followed). Here the
listing is re-read before every file, so a checkpoint that training's
``keep_checkpoint_max`` removed meanwhile is not handed out.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from t2t_repro import fileio

POLL_SECONDS = 10  # T2T's sleep_sec
_NUMBERED = re.compile(r"^.+-(\d+)$")


@dataclass(frozen=True)
class StepFile:
    path: str  # a file, or a checkpoint prefix
    mtime: float  # seconds since the epoch (a checkpoint's: its .index file's)
    step: int
    # Its inode's change time (None: ``mtime``): T2T waits from it, which a file dated back to
    # its checkpoint's time (translations, averages) does not move.
    ctime: float | None = None


def numbered_files(directory: str) -> list[StepFile]:
    """Files named ``<anything>-<step>`` in ``directory`` (T2T's ``*-[0-9]*`` with no suffix:
    translate-all's ``<problem>-<step>``), oldest step first. Temp files of atomic writes
    (``...-7.<random>.tmp``) and ``<problem>-flags.txt`` do not match."""
    if not fileio.isdir(directory):
        return []
    found = []
    for name in fileio.listdir(directory):
        match = _NUMBERED.match(name)
        path = os.path.join(directory, name)
        if match and fileio.isfile(path):
            step = int(match.group(1))
            found.append(StepFile(path, fileio.getmtime(path), step, fileio.getctime(path)))
    return sorted(found, key=lambda f: f.step)


def follow_steps(
    list_files: Callable[[], list[StepFile]],
    wait_minutes: float = 0,
    min_steps: int = 0,
    *,
    describe: str = "file",
    log: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
) -> Iterator[StepFile]:
    """Yields each file of ``list_files()`` with step >= ``min_steps`` once, in step order;
    with ``wait_minutes``, waits for more until none has come for that long (measured from
    the start, then from the last file's ctime, as T2T's ``stepfiles_iterator``)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    exit_time = now() + wait_minutes * 60
    waiting_said = False
    while True:
        pending = [f for f in list_files() if f.step >= min_steps]
        if not pending and wait_minutes:
            if now() > exit_time:
                return
            if not waiting_said:
                log(
                    f"waiting until {time.asctime(time.localtime(exit_time))} for a new "
                    f"{describe} (step >= {min_steps})"
                )
                waiting_said = True
            sleep(POLL_SECONDS)
            continue
        if not pending:
            return
        waiting_said = False
        found = min(pending, key=lambda f: f.step)
        min_steps = found.step + 1
        exit_time = (found.mtime if found.ctime is None else found.ctime) + wait_minutes * 60
        yield found
