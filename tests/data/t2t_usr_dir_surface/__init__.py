"""A tensor2tensor 1.15 usr_dir of T2T's registry rules, written only against T2T's API:
T2T's ``Text2textTmpdir`` and ``Text2textTmpdirTokens``, a user's own ``TextEncoder``
subclass, and a ``TranslateProblem`` whose files come from a ``.zip``, a tsv in it and ``.gz``
files (docs/porting.md).

It runs unchanged with the real tensor2tensor (tools/t2t_reference/make_t2t_usr_dir_reference.py
makes the reference data with it) and with this project's tools
(tests/test_t2t_usr_dir_surface.py).
"""

from . import surface_problems  # noqa: F401
