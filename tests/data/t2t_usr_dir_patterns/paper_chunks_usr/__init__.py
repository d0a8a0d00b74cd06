"""A character language model over fixed-length chunks of one text (a T2T 1.15 usr_dir)."""

from paper_chunks_usr.chunks_problem import *  # noqa: F401,F403 (its own package, by name)
