"""A TranslateProblem with separate input and target word vocabularies (a T2T 1.15 usr_dir)."""

from . import word_problem  # noqa: F401
