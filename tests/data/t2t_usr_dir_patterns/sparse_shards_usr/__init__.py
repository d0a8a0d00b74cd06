"""A subword Text2TextProblem dealt over more shards than it has pairs (a T2T 1.15 usr_dir)."""

from . import verse_problem  # noqa: F401
