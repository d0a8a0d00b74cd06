"""absl's ``--flagfile``, which every T2T 1.15 tool takes (``tf.app.run`` parses flags with
absl): the file's flags stand where the flag stood, one a line (``--name=value``), blank
lines and lines starting with ``#`` or ``//`` skipped, a ``--flagfile`` inside read in turn
(absl's ``FlagValues.read_flags_from_files``)."""

from __future__ import annotations

import os

from t2t_repro import fileio
from t2t_repro.errors import UsageError

FLAG = "--flagfile"


def expand_flagfiles(argv: list[str], _reading: tuple[str, ...] = ()) -> list[str]:
    """``argv`` with each ``--flagfile=PATH`` (or ``--flagfile PATH``) replaced by its flags;
    a missing file or a file that reads itself is a one-line UsageError."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":  # absl: what follows is arguments, not flags
            return out + list(argv[i:])
        if arg == FLAG:
            if i + 1 >= len(argv):
                raise UsageError("--flagfile needs a file (--flagfile=PATH).")
            path, i = argv[i + 1], i + 2
        elif arg.startswith(FLAG + "="):
            path, i = arg[len(FLAG) + 1 :], i + 1
        else:
            out.append(arg)
            i += 1
            continue
        if path in _reading:
            raise UsageError(f"--flagfile={path} reads itself (through {' -> '.join(_reading)}).")
        path = os.path.expanduser(path)  # as absl's FlagValues._get_flag_file_lines
        out.extend(expand_flagfiles(_flag_lines(path), (*_reading, path)))
    return out


def _flag_lines(path: str) -> list[str]:
    try:
        with fileio.open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--flagfile={path}: cannot read it ({e}).") from None
    return [line for line in lines if line and not line.startswith(("#", "//"))]
