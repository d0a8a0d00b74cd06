"""A tensor2tensor 1.15 usr_dir of the Problem hooks and quirks public usr_dirs use, written only
against T2T's API (docs/porting.md): a CHARACTER TranslateProblem (T2T's loss_multiplier of 2),
samples read with readlines() that keep their '\\n' (T2T's vocab-file quirk), and an hparams()
hook that reads the run's model hparams.

It runs unchanged with the real tensor2tensor (tools/t2t_reference/make_t2t_usr_dir_reference.py
makes the reference data with it) and here (tests/test_t2t_usr_dir_hooks.py).
"""

from . import hook_hparams, hook_problems  # noqa: F401
