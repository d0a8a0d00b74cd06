"""Registered models. Importing this package registers every model."""

from t2t_repro.models import (
    transformer,  # noqa: F401
    transformer_encoder,  # noqa: F401
)
