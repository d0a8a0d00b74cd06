"""Checks on the paths a tool is given, made before any work starts."""

from __future__ import annotations

import os

from t2t_repro import fileio


def expect_directory(path: str, flag: str) -> None:
    """``path`` must be a directory or not exist yet (it is then created when needed)."""
    if path and fileio.exists(path) and not fileio.isdir(path):
        raise NotADirectoryError(f"{flag}={path} is a file; a directory is expected there.")


def expect_file_destination(path: str, flag: str) -> None:
    """``path`` must be a file name whose folder can hold it, not an existing directory."""
    if fileio.isdir(path):
        raise IsADirectoryError(f"{flag}={path} is a directory; give a file name to write to.")
    parent = os.path.dirname(fileio.expand(path))
    if fileio.exists(parent) and not fileio.isdir(parent):
        raise NotADirectoryError(f"{flag}={path}: {parent} is a file, not a directory.")
