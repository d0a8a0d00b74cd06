"""Makes ``import tensor2tensor...`` in a --t2t_usr_dir resolve to this package, so a usr_dir
written for T2T 1.15 registers into this project's registry unchanged.

``install()`` runs before the usr_dir is imported and only when ``tensor2tensor`` is not
importable (a real installation is never shadowed). It puts the modules below in
``sys.modules`` under T2T's names; any other ``tensor2tensor.*`` import fails with one line
saying which modules exist here (docs/porting.md).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

# T2T's module -> this project's module that provides its names.
ALIASES = {
    "tensor2tensor.utils.registry": "t2t_repro.t2t_compat.registry",
    "tensor2tensor.utils.hparam": "t2t_repro.hparam",
    "tensor2tensor.utils.metrics": "t2t_repro.t2t_compat.metrics",
    "tensor2tensor.utils.t2t_model": "t2t_repro.t2t_compat.t2t_model",
    "tensor2tensor.data_generators.problem": "t2t_repro.t2t_compat.problem",
    "tensor2tensor.data_generators.text_problems": "t2t_repro.t2t_compat.text_problems",
    "tensor2tensor.data_generators.translate": "t2t_repro.t2t_compat.translate",
    "tensor2tensor.data_generators.text_encoder": "t2t_repro.t2t_compat.text_encoder",
    "tensor2tensor.data_generators.generator_utils": "t2t_repro.t2t_compat.generator_utils",
    "tensor2tensor.layers.common_hparams": "hparams.basic",
    "tensor2tensor.layers.modalities": "t2t_repro.t2t_compat.modalities",
    "tensor2tensor.models.transformer": "t2t_repro.t2t_compat.transformer",
}
ROOT = "tensor2tensor"


class _RefuseOtherModules(importlib.abc.MetaPathFinder):
    """Any ``tensor2tensor.*`` module not in ``ALIASES``: one line naming what exists."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == ROOT or fullname.startswith(ROOT + "."):
            # No ``name=``: ``from tensor2tensor.x import y`` would turn an error that names
            # the missing module into a vaguer "cannot import name".
            raise ModuleNotFoundError(
                f"{fullname} is not part of this project's tensor2tensor API, which provides "
                f"{', '.join(sorted(ALIASES))} (docs/porting.md)"
            )
        return None


_FINDER = _RefuseOtherModules()


def installed() -> bool:
    return getattr(sys.modules.get(ROOT), "__t2t_repro_alias__", False)


def install() -> bool:
    """Install the aliases unless a real tensor2tensor is importable; True when installed."""
    if installed():
        return True
    if ROOT in sys.modules or importlib.util.find_spec(ROOT) is not None:
        return False
    for alias, target in ALIASES.items():
        module = importlib.import_module(target)
        parts = alias.split(".")
        for depth in range(1, len(parts)):
            name = ".".join(parts[:depth])
            if name not in sys.modules:
                package = types.ModuleType(name, f"t2t_repro's stand-in for {name}")
                package.__path__ = []
                package.__t2t_repro_alias__ = True
                sys.modules[name] = package
                if depth > 1:
                    setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1], package)
        sys.modules[alias] = module
        setattr(sys.modules[".".join(parts[:-1])], parts[-1], module)
    sys.meta_path.insert(0, _FINDER)
    return True
