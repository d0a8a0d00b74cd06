"""Exporting trained models for serving: a SavedModel with in-graph tokenisation, or a
CTranslate2 model directory."""

from t2t_repro.errors import UserError


class ExportError(UserError, ValueError):
    """The model or vocabulary cannot be exported as asked."""
