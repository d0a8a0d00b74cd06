"""The project's built-in registrations, under a name the project owns.

``t2t_repro.builtin.problems`` and ``t2t_repro.builtin.hparams`` are the checkout's top-level
``problems/`` and ``hparams/`` folders, mapped here by ``setup.py`` (``package_dir``), so that
no top-level module named ``problems`` or ``hparams`` is installed or imported: a
``--t2t_usr_dir`` of that name is the user's, as in T2T (docs/porting.md).
"""
