"""Exporting trained models for serving (SavedModel with in-graph tokenisation)."""


class ExportError(ValueError):
    """The model or vocabulary cannot be exported as asked."""
