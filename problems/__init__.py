"""Registered problems. Importing this package registers every problem."""

from t2t_repro.builtin.problems import (  # noqa: F401
    algorithmic,
    parallel_corpus,
    translate_multi30k,
    translate_wmt,
    wsj_parsing,
)
