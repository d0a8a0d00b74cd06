"""A tensor2tensor 1.15 usr_dir whose problems read their records themselves, written only
against T2T's API (docs/porting.md): one adds an int64 field to T2T's example_reading_spec (the
transformer ignores it), one truncates the targets in preprocess_example
(tests/test_t2t_usr_dir_reading.py)."""

from . import reading_problems  # noqa: F401
