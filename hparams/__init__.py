"""Registered hparams sets. Importing this package registers every set."""

from hparams import basic, parsing, small_data, table3, transformer  # noqa: F401
