"""Checks on the paths a tool is given, made before any work starts."""

from __future__ import annotations

import os


def expect_directory(path: str, flag: str) -> None:
    """``path`` must be a directory or not exist yet (it is then created when needed)."""
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"{flag}={path} is a file; a directory is expected there.")


def expect_file_destination(path: str, flag: str) -> None:
    """``path`` must be a file name whose folder can hold it, not an existing directory."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{flag}={path} is a directory; give a file name to write to.")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise NotADirectoryError(f"{flag}={path}: {parent} is a file, not a directory.")
