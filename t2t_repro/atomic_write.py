"""The one way files are written: readers never see a half-written file.

The data goes to a temp file in the target's directory (the same filesystem, so the rename
is atomic), is flushed to disk, then ``os.replace`` puts it over the target. A failed write
removes its temp file and leaves the old target untouched; a killed process leaves at most a
``<target>.<random>.tmp`` leftover, which datagen recognises and readers skip (``*.tmp``).
Unique temp names let two processes write the same file (the last rename wins, whole).
The target's directory must exist (callers create it where that is wanted).
On ``gs://``, ``ram://`` and other schemes the same steps run through ``tf.io.gfile``
(:mod:`t2t_repro.fileio`; what a rename gives there is said in its docstring).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import IO

from t2t_repro import fileio


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yields a temp path beside ``path`` for a writer that takes a path (TFRecordWriter,
    tar extraction); it replaces ``path`` when the block ends without an exception."""
    tmp = f"{path}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        yield tmp
        fileio.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            fileio.remove(tmp)
        raise


@contextlib.contextmanager
def atomic_open(
    path: str, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None
) -> Iterator[IO]:
    """``open(path, mode)`` ("w" or "wb") whose content appears at ``path`` only when the
    block completes."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file: mode 'w' or 'wb', not {mode!r}.")
    text = {} if mode == "wb" else {"encoding": encoding, "newline": newline}
    with atomic_path(path) as tmp:
        with fileio.open(tmp, mode.replace("w", "x"), **text) as f:
            yield f
            f.flush()
            if not fileio.is_url(tmp):
                os.fsync(f.fileno())


def write_text_atomically(
    path: str, text: str, *, encoding: str = "utf-8", newline: str | None = None
) -> None:
    with atomic_open(path, "w", encoding=encoding, newline=newline) as f:
        f.write(text)


def write_bytes_atomically(path: str, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)
