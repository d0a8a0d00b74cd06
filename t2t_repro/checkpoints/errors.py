"""The error of every checkpoint reader and writer (a ``UserError``: one line from any tool)."""

from t2t_repro.errors import UserError


class CheckpointError(UserError, RuntimeError):
    """A checkpoint that is missing, unreadable or does not match the model."""


def retired_layout(error_text: str) -> str:
    """What a restore's mismatch (``error_text``) means when a layout this project changed
    may explain it ("" when none can)."""
    if "positional/position_embedding" in error_text:
        return (
            "its learned position table (pos=emb) has another shape: the table has max_length "
            "rows (keep the run's max_length), and a run trained here with pos=emb before "
            "learned positions became T2T's (one table of max_position_embeddings rows) "
            "cannot be restored at all: train it anew in a new --output_dir"
        )
    return ""
