"""``--t2t_usr_dir``: import a user's module or package so that its registrations take effect.

A usr_dir written for tensor2tensor 1.15 imports ``tensor2tensor.*``; when no real tensor2tensor
is installed those names resolve to this project's equivalents (``t2t_compat/aliases.py``), so
its problems and hparams sets register here unchanged (docs/porting.md). Its modules see
TF 1.15's ``tf.logging``, ``tf.gfile``, ``tf.flags`` (``t2t_compat/tf1_names.py``).
"""

from __future__ import annotations

import importlib
import os
import sys

from t2t_repro.t2t_compat import aliases, tf1_names


def import_usr_dir(usr_dir: str | None) -> None:
    """Import ``usr_dir`` (a package directory, or a single ``.py`` file) by its own name."""
    if not usr_dir:
        return
    path = os.path.abspath(os.path.expanduser(usr_dir)).rstrip(os.sep)
    if not os.path.exists(path):
        raise FileNotFoundError(f"--t2t_usr_dir {usr_dir}: no such file or directory.")
    parent, name = os.path.split(path)
    if name.endswith(".py"):
        name = name[:-3]
    aliases.install()
    finder = tf1_names.UsrDirFinder(path)
    sys.path.insert(0, parent)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(name)
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(parent)
