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

from t2t_repro.t2t_compat.refusals import T2TApiError, refusal_message

__all__ = ["ALIASES", "BOILERPLATE", "T2TApiError", "install", "installed"]

# T2T's module -> this project's module that provides its names.
ALIASES = {
    "tensor2tensor.utils.registry": "t2t_repro.t2t_compat.registry",
    "tensor2tensor.utils.hparam": "t2t_repro.t2t_compat.hparam",
    "tensor2tensor.utils.metrics": "t2t_repro.t2t_compat.metrics",
    "tensor2tensor.utils.t2t_model": "t2t_repro.t2t_compat.t2t_model",
    "tensor2tensor.data_generators.problem": "t2t_repro.t2t_compat.problem",
    "tensor2tensor.data_generators.text_problems": "t2t_repro.t2t_compat.text_problems",
    "tensor2tensor.data_generators.translate": "t2t_repro.t2t_compat.translate",
    "tensor2tensor.data_generators.text_encoder": "t2t_repro.t2t_compat.text_encoder",
    "tensor2tensor.data_generators.generator_utils": "t2t_repro.t2t_compat.generator_utils",
    "tensor2tensor.data_generators.tokenizer": "t2t_repro.t2t_compat.tokenizer",
    "tensor2tensor.layers.common_hparams": "t2t_repro.t2t_compat.common_hparams",
    "tensor2tensor.layers.modalities": "t2t_repro.t2t_compat.modalities",
    "tensor2tensor.models.transformer": "t2t_repro.t2t_compat.transformer",
    "tensor2tensor.utils.mlperf_log": "t2t_repro.t2t_compat.mlperf_log",
    "tensor2tensor.utils.mlperf_tags": "t2t_repro.t2t_compat.mlperf_tags",
    # T2T's language-model problems (their classes, for a usr_dir that subclasses them).
    "tensor2tensor.data_generators.ptb": "t2t_repro.t2t_compat.lm_problems",
    "tensor2tensor.data_generators.lm1b": "t2t_repro.t2t_compat.lm_problems",
    "tensor2tensor.data_generators.wikitext103": "t2t_repro.t2t_compat.lm_problems",
}
_NO_LAYERS = (
    "T2T's layers are not provided: only this project's own transformer runs "
    "(--model=transformer with an hparams set)"
)
# T2T's modules that usr_dirs made from T2T's notebooks import without using them: each
# imports, and using any of its names fails in one line saying what to use here instead.
BOILERPLATE = {
    "tensor2tensor.problems": (
        "look a problem up with registry.problem(name) from tensor2tensor.utils.registry "
        "(t2t-datagen --registry_help lists them)"
    ),
    "tensor2tensor.utils.trainer_lib": (
        "train with t2t-trainer, and build hparams with registry.hparams(name) from "
        "tensor2tensor.utils.registry"
    ),
    "tensor2tensor.layers.common_layers": _NO_LAYERS,
    "tensor2tensor.utils.optimize": (
        "the optimizer and learning-rate schedule are set by hparams (optimizer, "
        "learning_rate_schedule, ...) in an hparams set or --hparams"
    ),
    "tensor2tensor.utils.decoding": (
        "decode with t2t-decoder (--decode_from_file, --decode_interactive, or a split)"
    ),
    "tensor2tensor.layers.common_attention": _NO_LAYERS,
    "tensor2tensor.data_generators.problem_hparams": (
        "T2T's test problem hparams are not provided: a problem's hparams come from its "
        "hparams(defaults, model_hparams) hook"
    ),
}
ROOT = "tensor2tensor"


def _boilerplate_module(name: str, instead: str) -> types.ModuleType:
    """``name`` as an importable module whose every public name, when used, raises one line."""
    module = types.ModuleType(name, f"t2t_repro's stand-in for {name}: nothing in it is usable")

    def __getattr__(attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise T2TApiError(refusal_message(f"{name}.{attr}", instead))

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


def _register_t2t_problems() -> None:
    """T2T's own registered problems (``Text2textTmpdir``...), registered again when a test
    restored the registry since their module was imported (registering is idempotent)."""
    from t2t_repro import registry
    from t2t_repro.t2t_compat import tmpdir_problems

    for cls in tmpdir_problems.T2T_REGISTERED_PROBLEMS:
        registry.register_problem(cls.problem_name)(cls)


def install() -> bool:
    """Install the aliases unless a real tensor2tensor is importable; True when installed."""
    if installed():
        _register_t2t_problems()
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
