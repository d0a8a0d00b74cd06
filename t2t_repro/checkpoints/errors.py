"""The error of every checkpoint reader and writer (a ``UserError``: one line from any tool)."""

from t2t_repro.errors import UserError


class CheckpointError(UserError, RuntimeError):
    """A checkpoint that is missing, unreadable or does not match the model."""
