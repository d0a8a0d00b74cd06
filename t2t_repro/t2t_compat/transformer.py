"""``tensor2tensor.models.transformer`` for a T2T usr_dir: T2T 1.15's hparams functions, each
returning this project's ``HParams`` of the registered set that means the same.

T2T 1.15 names its sets by their newest version: its ``transformer_base`` is ``_v3`` here,
where the plain names are the paper's (README's hparams table; ``t2t_import/hparams_map.py``
maps the names of an imported train dir the same way). A usr_dir's
``hparams = transformer.transformer_base(); hparams.hidden_size = 256`` therefore starts from
the set T2T would have given it.

The model class itself is not T2T's: ``Transformer`` exists so a usr_dir that names it imports;
a model registered from it is refused when used (``t2t_compat/registry.py``).
"""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparam import HParams

# T2T 1.15 name -> this project's set, where they differ.
T2T_SET_NAMES = {
    "transformer_base": "transformer_base_v3",
    "transformer_big": "transformer_big_v3",
    "transformer_big_enfr": "transformer_big_enfr_v3",
}


def t2t_set_name(name: str) -> str:
    """This project's name of the set T2T 1.15 calls ``name``."""
    return T2T_SET_NAMES.get(name, name)


def _t2t_set(name: str) -> HParams:
    return registry.hparams(t2t_set_name(name))


def transformer_base_v1() -> HParams:
    return _t2t_set("transformer_base_v1")


def transformer_base_v2() -> HParams:
    return _t2t_set("transformer_base_v2")


def transformer_base_v3() -> HParams:
    return _t2t_set("transformer_base_v3")


def transformer_base() -> HParams:
    return _t2t_set("transformer_base")


def transformer_big() -> HParams:
    return _t2t_set("transformer_big")


def transformer_big_enfr() -> HParams:
    return _t2t_set("transformer_big_enfr")


def transformer_base_single_gpu() -> HParams:
    return _t2t_set("transformer_base_single_gpu")


def transformer_big_single_gpu() -> HParams:
    return _t2t_set("transformer_big_single_gpu")


def transformer_tiny() -> HParams:
    return _t2t_set("transformer_tiny")


def transformer_small() -> HParams:
    return _t2t_set("transformer_small")


def transformer_test() -> HParams:
    return _t2t_set("transformer_test")


def transformer_relative() -> HParams:
    return _t2t_set("transformer_relative")


def transformer_relative_tiny() -> HParams:
    return _t2t_set("transformer_relative_tiny")


def transformer_relative_big() -> HParams:
    return _t2t_set("transformer_relative_big")


class Transformer:
    """Stands for T2T's model class so that a usr_dir naming it imports; this project's
    ``transformer`` model is chosen with --model=transformer, not by subclassing."""
