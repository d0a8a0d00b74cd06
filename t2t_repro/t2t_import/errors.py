"""The one error type of the importer (a ``CheckpointError``, so every tool reports it cleanly)."""

from t2t_repro.checkpoints.errors import CheckpointError


class T2TImportError(CheckpointError):
    """A T2T directory that cannot be imported as it is; the message says why and what to do."""
