"""Modules that TensorFlow's import pulls in but no tool uses, put off until first used.

Importing TensorFlow imports Keras, and Keras imports ``matplotlib.pyplot`` whenever matplotlib
is installed (``keras/src/visualization/plot_image_gallery.py`` and its siblings, for plotting
helpers no tool calls): ~0.3 of the ~2.6 CPU-s a tool's start costs (AMD EPYC Zen 4). The
project's attention maps draw on matplotlib's Agg canvas, without pyplot. So the tools
(``t2t_repro.console``) put a stand-in for it in ``sys.modules`` before TensorFlow's import:
Keras' ``import`` finds the stand-in, and the first name anyone looks up on it (a usr_dir
that plots, say) runs the real module, which from then on is the one in ``sys.modules``.

The standard library's ``importlib.util.LazyLoader`` does not do here: the next ``import``
statement of the module reads its ``__spec__``, which runs it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

# Imported by Keras at TensorFlow's import, used by no tool.
UNUSED_AT_START = ("matplotlib.pyplot",)


class DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module not run yet. What an ``import`` statement or a
    scan of ``sys.modules`` reads (``__spec__``, ``__file__``, ...) is set on it; any other
    name looked up runs the real module, which replaces the stand-in in ``sys.modules``; the
    stand-in then hands every lookup to it."""

    def __init__(self, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__file__ = spec.origin
        self.__package__ = spec.parent

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__") and name != "__all__":
            # What tools ask of every module without using it (inspect.getmodule, hasattr(m,
            # "__path__"), "__wrapped__"...): a plain module lacking it says the same.
            raise AttributeError(name)
        real_name = self.__spec__.name
        if sys.modules.get(real_name) is self:
            del sys.modules[real_name]
        return getattr(importlib.import_module(real_name), name)


def defer_import(name: str) -> bool:
    """Puts a stand-in for module ``name`` in ``sys.modules`` (its parent package is imported
    to find it); False when the module is already imported or not installed."""
    if name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # its parent package is not installed
        return False
    if spec is None:
        return False
    sys.modules[name] = DeferredModule(spec)
    return True


def defer_unused_imports() -> None:
    """``defer_import`` of each of ``UNUSED_AT_START``: call it before TensorFlow's import."""
    for name in UNUSED_AT_START:
        defer_import(name)
