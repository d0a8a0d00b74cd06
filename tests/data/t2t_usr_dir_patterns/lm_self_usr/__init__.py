"""A character language model (a T2T 1.15 usr_dir): a ``Text2SelfProblem``."""

from . import lm_problem  # noqa: F401
