"""The one base class of errors that are the user's to fix.

A ``UserError`` (a bad flag, a missing or malformed file, an unknown name, a checkpoint that
does not fit) ends a tool with ``<tool>: error: <message>`` and exit code 1 (``commands.cli.run``);
any other exception is a bug and keeps its traceback. Each module's own error class derives
from it (keeping its old built-in base, e.g. ``ValueError``, for existing ``except`` clauses).
"""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix; the message says what is wrong and what to do."""


class UsageError(UserError):
    """A missing or inconsistent flag."""


class DataError(UserError):
    """Raw data is missing or malformed; the message says which file and what to do."""
