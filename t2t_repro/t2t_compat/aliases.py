"""Makes ``import tensor2tensor...`` in a --t2t_usr_dir resolve to this package, so a usr_dir
written for T2T 1.15 registers into this project's registry unchanged.

``install()`` runs before the usr_dir is imported and only when ``tensor2tensor`` is not
importable (a real installation is never shadowed). It puts the modules below in
``sys.modules`` under T2T's names, and ``BOILERPLATE``'s modules, which import but whose names
fail in one line when used; any other ``tensor2tensor.*`` import fails with one line saying
which modules exist here (docs/porting.md).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

from t2t_repro.errors import UserError

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
# T2T's modules that usr_dirs made from T2T's notebooks import without using them: each
# imports, and using any of its names fails in one line saying what to use here instead.
BOILERPLATE = {
    "tensor2tensor.problems": (
        "look a problem up with registry.problem(name) from tensor2tensor.utils.registry "
        "(t2t-datagen --registry_help lists them)"
    ),
    "tensor2tensor.utils.trainer_lib": (
        "train with t2t-trainer, and build hparams with registry.hparams(name)() from "
        "tensor2tensor.utils.registry"
    ),
    "tensor2tensor.layers.common_layers": (
        "T2T's layers are not provided: only this project's own transformer runs "
        "(--model=transformer with an hparams set)"
    ),
    "tensor2tensor.utils.optimize": (
        "the optimizer and learning-rate schedule are set by hparams (optimizer, "
        "learning_rate_schedule, ...) in an hparams set or --hparams"
    ),
}
ROOT = "tensor2tensor"


class T2TApiError(UserError):
    """A name of a T2T module that imports here but whose contents this project does not
    provide. Not an ``AttributeError``: ``from m import name`` would turn it into a vaguer
    "cannot import name"."""


def _boilerplate_module(name: str, instead: str) -> types.ModuleType:
    """``name`` as an importable module whose every public name, when used, raises one line."""
    module = types.ModuleType(name, f"t2t_repro's stand-in for {name}: nothing in it is usable")

    def __getattr__(attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise T2TApiError(
            f"{name}.{attr} is not provided by this project's tensor2tensor API: {instead} "
            "(docs/porting.md)."
        )

    module.__getattr__ = __getattr__
    return module


class _RefuseOtherModules(importlib.abc.MetaPathFinder):
    """Any ``tensor2tensor.*`` module not in ``ALIASES``: one line naming what exists."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == ROOT or fullname.startswith(ROOT + "."):
            # No ``name=``: ``from tensor2tensor.x import y`` would turn an error that names
            # the missing module into a vaguer "cannot import name".
            raise ModuleNotFoundError(
                f"{fullname} is not part of this project's tensor2tensor API, which provides "
                f"{', '.join(sorted([*ALIASES, *BOILERPLATE]))} (docs/porting.md)"
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
    modules = {alias: importlib.import_module(target) for alias, target in ALIASES.items()}
    modules.update({name: _boilerplate_module(name, i) for name, i in BOILERPLATE.items()})
    for alias, module in modules.items():
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
