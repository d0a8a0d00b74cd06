"""Registered problems. Importing this package registers every problem."""

from problems import (  # noqa: F401
    algorithmic,
    parallel_corpus,
    translate_multi30k,
    translate_wmt,
    wsj_parsing,
)
