"""Modules that TensorFlow's import pulls in but no tool uses, put off until first used.

Importing TensorFlow imports Keras, and Keras imports ``matplotlib.pyplot`` whenever matplotlib
is installed (``keras/src/visualization/plot_image_gallery.py`` and its siblings, for plotting
helpers no tool calls): ~0.4 of the ~3.0 CPU-s a tool's start costs (AMD EPYC Zen 4). The
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
import threading
import types

# Imported by Keras at TensorFlow's import, used by no tool.
UNUSED_AT_START = ("matplotlib.pyplot",)

# One real import at a time: two threads' first uses must not both run the module.
_LOADING = threading.RLock()


class DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` (and as its package's attribute) for a module not run yet.
    What an ``import`` statement or a scan of ``sys.modules`` reads (``__spec__``,
    ``__file__``, ...) is set on it; any other name looked up, ``dir()`` or a star import runs
    the real module, which replaces the stand-in; the stand-in then hands every lookup to it."""

    def __init__(self, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__file__ = spec.origin
        self.__package__ = spec.parent

    def _real(self) -> types.ModuleType:
        real = self.__dict__.get("__deferred_real__")
        if real is None:
            with _LOADING:
                if sys.modules.get(self.__name__) is self:
                    del sys.modules[self.__name__]
                real = importlib.import_module(self.__name__)
                self.__dict__["__deferred_real__"] = real
        return real

    def __getattr__(self, name: str) -> object:
        if name == "__all__":  # a star import: the real module's, else its public names
            real = self._real()
            return getattr(real, "__all__", [n for n in vars(real) if not n.startswith("_")])
        if name.startswith("__") and name.endswith("__"):
            # What scans of sys.modules ask every module (hasattr(m, "__path__"),
            # "__wrapped__", ...) without using it: a plain module lacking it says the same.
            raise AttributeError(name)
        return getattr(self._real(), name)

    def __dir__(self) -> list[str]:
        return dir(self._real())


def defer_import(name: str) -> bool:
    """Puts a stand-in for module ``name`` in ``sys.modules`` and on its parent package (which
    is imported to find it); False when the module is already imported or not installed."""
    if name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # its parent package is not installed
        return False
    if spec is None:
        return False
    stand_in = DeferredModule(spec)
    sys.modules[name] = stand_in
    if spec.parent:
        setattr(sys.modules[spec.parent], name.rpartition(".")[2], stand_in)
    return True


def defer_unused_imports() -> None:
    """``defer_import`` of each of ``UNUSED_AT_START``: call it before TensorFlow's import."""
    for name in UNUSED_AT_START:
        defer_import(name)
