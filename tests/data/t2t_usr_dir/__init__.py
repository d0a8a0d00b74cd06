"""A tensor2tensor 1.15 usr_dir, written only against T2T's API (docs/porting.md).

It runs unchanged with the real tensor2tensor (tools/t2t_reference/make_t2t_usr_dir_reference.py
makes the reference data with it) and with this project's t2t-datagen / t2t-trainer /
t2t-decoder (tests/test_t2t_usr_dir.py).
"""

from . import tiny_hparams, tiny_problems  # noqa: F401
