"""TF1-era names in a --t2t_usr_dir's own code: ``tf.logging``, ``tf.gfile``, ``tf.flags``...

T2T 1.15 ran on TensorFlow 1.15, so most usr_dirs call ``tf.logging.info`` or
``tf.gfile.Exists``, names TensorFlow 2 dropped. The usr_dir's modules are executed with their
own ``__builtins__``, whose ``__import__`` gives ``import tensorflow`` a thin proxy of the real
module: what TensorFlow 2 has is TensorFlow 2's, and only the names in ``TF1_NAMES`` that it
lacks come from ``tf.compat.v1``. The ``tensorflow`` module itself is not changed, so no other
code sees these names (docs/porting.md).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import os
import types
from typing import Any

# TF 1.15's modules that TF 2 dropped and ``tf.compat.v1`` keeps, as usr_dirs use them; and
# the feature kinds of a Problem's example_reading_spec (T2T's own: ``tf.VarLenFeature``).
TF1_NAMES = ("logging", "gfile", "flags", "app", "python_io", "VarLenFeature", "FixedLenFeature")


class ModeKeys:
    """``tf.estimator.ModeKeys``, the ``mode`` values a Problem's ``preprocess_example`` gets
    (TensorFlow 2.21 has no ``tf.estimator``; nothing else of it is here)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


ESTIMATOR = types.SimpleNamespace(ModeKeys=ModeKeys)


class TF1Names(types.ModuleType):
    """``tensorflow`` as a usr_dir's code sees it: TF 2's names, plus ``TF1_NAMES`` from
    ``tf.compat.v1`` where TF 2 has none, and ``tf.estimator.ModeKeys``."""

    def __init__(self, tf: types.ModuleType) -> None:
        super().__init__(tf.__name__, tf.__doc__)
        self.__dict__["_t2t_repro_tf"] = tf

    def __getattr__(self, name: str) -> Any:
        tf = self.__dict__["_t2t_repro_tf"]
        try:
            return getattr(tf, name)
        except AttributeError:
            if name in TF1_NAMES:
                return getattr(tf.compat.v1, name)
            if name == "estimator":
                return ESTIMATOR
            raise


_PROXY: TF1Names | None = None


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` for a usr_dir's modules: ``tensorflow`` itself is the proxy."""
    global _PROXY
    module = builtins.__import__(name, globals, locals, fromlist, level)
    if level == 0 and module.__name__ == "tensorflow" and name.split(".")[0] == "tensorflow":
        if _PROXY is None or _PROXY.__dict__["_t2t_repro_tf"] is not module:
            _PROXY = TF1Names(module)
        return _PROXY
    return module


BUILTINS = {**vars(builtins), "__import__": _import}


class _UsrDirLoader(importlib.machinery.SourceFileLoader):
    """Executes a usr_dir's module with ``BUILTINS`` (its functions keep them)."""

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = BUILTINS
        super().exec_module(module)


class UsrDirFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of the usr_dir at ``path`` (a package directory or a ``.py`` file)
    as the path finder does, loading their source with ``_UsrDirLoader``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.top = os.path.basename(path)[: -len(".py")] if path.endswith(".py") else None
        self.top = self.top or os.path.basename(path)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] != self.top:
            return None
        if path is None:
            path = [os.path.dirname(self.path)]
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        origin = getattr(spec, "origin", None) or ""
        inside = origin == self.path or origin.startswith(self.path + os.sep)
        if not inside or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _UsrDirLoader(fullname, origin)
        return spec
