"""Registered hparams sets. Importing this package registers every set."""

from hparams import basic, table3, transformer  # noqa: F401
