"""TF1-era names in a --t2t_usr_dir's own code: ``tf.logging``, ``tf.train.Optimizer``...

T2T 1.15 ran on TensorFlow 1.15, so most usr_dirs call ``tf.logging.info`` or
``tf.gfile.Exists``, or subclass ``tf.train.Optimizer``: names TensorFlow 2 dropped and
``tf.compat.v1`` keeps. The usr_dir's modules are executed with their own ``__builtins__``,
whose ``__import__`` gives ``import tensorflow`` a thin proxy of the real module: what
TensorFlow 2 has is TensorFlow 2's, and a name it lacks is ``tf.compat.v1``'s, at the top
(``tf.logging``, ``tf.placeholder``, ``tf.layers``) and in the modules both have
(``tf.train.Optimizer``, ``tf.nn.rnn_cell``: such a module is a proxy too). The
``tensorflow`` module itself is not changed, so no other code sees these names
(docs/porting.md).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import os
import types
from typing import Any

# TF 1.15 module names of ``tf.compat.v1`` that TF 2 also has but that stay TF 2's modules.
_NOT_MERGED = frozenset({"compat"})


class ModeKeys:
    """``tf.estimator.ModeKeys``, the ``mode`` values a Problem's ``preprocess_example`` gets
    (TensorFlow 2.21 has no ``tf.estimator``, not even in ``tf.compat.v1``; nothing else of it
    is here)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


ESTIMATOR = types.SimpleNamespace(ModeKeys=ModeKeys)


class TF1Names(types.ModuleType):
    """A TensorFlow module as a usr_dir's code sees it: TF 2's names, and ``tf.compat.v1``'s
    (``older``) where TF 2 has none. What it resolves is kept (a module-level lookup)."""

    def __init__(self, tf: types.ModuleType, older: types.ModuleType) -> None:
        super().__init__(tf.__name__, tf.__doc__)
        self.__dict__["_t2t_repro_tf"] = tf
        self.__dict__["_t2t_repro_v1"] = older

    def __getattr__(self, name: str) -> Any:
        tf, older = self.__dict__["_t2t_repro_tf"], self.__dict__["_t2t_repro_v1"]
        try:
            value = getattr(tf, name)
        except AttributeError:
            if name == "estimator" and not hasattr(older, name):
                return ESTIMATOR
            if name.startswith("_") or not hasattr(older, name):
                raise AttributeError(
                    f"module {tf.__name__!r} has no attribute {name!r} (neither TensorFlow 2 "
                    "nor tf.compat.v1 has it)"
                ) from None
            value = getattr(older, name)
        else:
            v1_module = None if name.startswith("_") else getattr(older, name, None)
            if (
                isinstance(value, types.ModuleType)
                and isinstance(v1_module, types.ModuleType)
                and v1_module is not value
                and name not in _NOT_MERGED
            ):
                value = TF1Names(value, v1_module)
        self.__dict__[name] = value
        return value


_PROXY: TF1Names | None = None


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` for a usr_dir's modules: ``tensorflow`` itself is the proxy."""
    global _PROXY
    module = builtins.__import__(name, globals, locals, fromlist, level)
    if level == 0 and module.__name__ == "tensorflow" and name.split(".")[0] == "tensorflow":
        if _PROXY is None or _PROXY.__dict__["_t2t_repro_tf"] is not module:
            _PROXY = TF1Names(module, module.compat.v1)
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
