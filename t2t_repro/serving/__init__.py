"""Exporting trained models for serving (SavedModel with in-graph tokenisation)."""

from t2t_repro.errors import UserError


class ExportError(UserError, ValueError):
    """The model or vocabulary cannot be exported as asked."""
