"""A character TranslateProblem whose class sets its own ``name`` (a T2T 1.15 usr_dir)."""

from . import chars_problem  # noqa: F401
