"""Text classification (a T2T 1.15 usr_dir): a ``Text2ClassProblem``."""

from . import label_problem  # noqa: F401
