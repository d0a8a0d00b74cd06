"""``tensor2tensor.utils.registry`` for a T2T usr_dir: its decorators register into this
project's registry under T2T's names (``tensor2tensor/utils/registry.py``).

Names are T2T's ``default_name``: the class or function name in snake_case by T2T's rule
(``misc_utils.camelcase_to_snakecase``, which also splits a digit from a following capital:
``Copy32K`` -> ``copy32_k``). A registered problem learns its name as T2T's ``_on_problem_set``
gives it (``cls.name``, a class attribute). A lookup of a name never registered raises the
project's ``RegistryError``, a ``KeyError`` as T2T's.

T2T models cannot run here (only this project's ``transformer`` exists): ``register_model``
keeps the name, and using it is refused in one line naming the class.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from t2t_repro import registry as _registry
from t2t_repro.errors import UserError
from t2t_repro.t2t_compat import refusals

_FIRST_CAP = re.compile("(.)([A-Z][a-z0-9]+)")
_ALL_CAP = re.compile("([a-z0-9])([A-Z])")


def default_name(class_or_fn: Any) -> str:
    """T2T's registered name of a class or function."""
    s1 = _FIRST_CAP.sub(r"\1_\2", class_or_fn.__name__)
    return _ALL_CAP.sub(r"\1_\2", s1).lower()


def default_object_name(obj: Any) -> str:
    """T2T's registered name of an object's class."""
    return default_name(type(obj))


class RegistrationError(UserError, ValueError):
    """A registration T2T's registry refuses with ValueError (a value that is not callable)."""


def _decorator(register, name_or_obj, on_set=None):
    def decorate(obj, name=None):
        if not callable(obj):  # T2T's Registry.register: "value must be callable"
            raise RegistrationError(f"registering {obj!r}: the value must be callable.")
        key = default_name(obj) if name is None else name
        if on_set is not None:
            obj = on_set(key, obj)
        register(key)(obj)
        return obj

    if callable(name_or_obj) and not isinstance(name_or_obj, str):
        return decorate(name_or_obj)
    return lambda obj: decorate(obj, name_or_obj)


def _on_problem_set(key: str, cls: type) -> type:
    """T2T's ``_on_problem_set`` (``utils/registry.py``): ``cls.name = key``, a class
    attribute, even over the class's own ``name = '...'`` (so its files are
    ``<registered name>-train-*``); ``problem_name`` too, which the project's registry reads
    (``aliases.py``). A class that adapts itself to the tools on registration (T2T's
    ``Problem``, ``on_t2t_registration``) then does. A subclass of a T2T name not provided
    here (a stand-in, ``refusals.py``) registers too: it is refused in one line when a tool
    makes the problem, not while the usr_dir is imported beside runnable problems."""
    cls.problem_name = key
    cls.name = key
    if refusals.is_stand_in(cls):
        return cls
    on_registration = getattr(cls, "on_t2t_registration", None)
    if on_registration is not None:
        on_registration()
    return cls


def register_problem(name: Any = None) -> Any:
    """``@registry.register_problem`` / ``@registry.register_problem("name")``."""
    return _decorator(_register_with_variants, name, _on_problem_set)


def _register_with_variants(key: str):
    """The project's registration; a usr_dir subclass of one of the project's problems under
    T2T's names (``translate_ende.TranslateEndeWmt32k``) also gets T2T's ``<key>_rev``, the
    project's kind of it (``problems/reversed_problem.py``), as T2T's registry gives every
    problem one (T2T's own Problem classes make theirs: ``registry.MAKES_T2T_VARIANTS``)."""

    def register(cls: Any) -> Any:
        _registry.register_problem(key)(cls)
        from t2t_repro.builtin.problems.base import Text2TextProblem
        from t2t_repro.builtin.problems.reversed_problem import (
            ReversedProblem,
            register_with_rev,
        )

        kind = isinstance(cls, type) and issubclass(cls, Text2TextProblem)
        if kind and not issubclass(cls, ReversedProblem) and not refusals.is_stand_in(cls):
            if key + "_rev" not in _registry.list_names(_registry.PROBLEMS):
                register_with_rev(cls)
        return cls

    return register


register_base_problem = register_problem


def register_hparams(name: Any = None) -> Any:
    """``@registry.register_hparams``: a function returning ``HParams`` (build it from
    ``transformer.transformer_base()`` and friends, T2T 1.15's sets)."""
    return _decorator(_registry.register_hparams, name)


class RangedHParamsError(UserError, ValueError):
    """A ranged-hparams function T2T's registry would refuse too."""


def _one_argument(key: str, fn: Any) -> Any:
    """T2T's check: a ranged-hparams function takes exactly one argument, the ranges."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) != 1 or params[0].kind not in positional:
        raise RangedHParamsError(
            f"ranged hparams {key!r} ({getattr(fn, '__name__', fn)}): a ranged-hparams "
            "function must take a single argument, the RangedHParams object."
        )
    return fn


def register_ranged_hparams(name: Any = None) -> Any:
    """``@registry.register_ranged_hparams``: a function ``fn(rhp)`` setting tuning ranges.
    Registered (``--registry_help`` lists it); tuning with it is refused (``--hparams_range``)."""
    return _decorator(_registry.register_ranged_hparams, name, _one_argument)


def ranged_hparams(name: str) -> Any:
    """The registered ranged-hparams function (T2T's ``registry.ranged_hparams``)."""
    return _registry._lookup(_registry.RANGED_HPARAMS, name)


def list_ranged_hparams() -> list[str]:
    return _registry.list_names(_registry.RANGED_HPARAMS)


class T2TModelError(UserError):
    """A T2T model class, which this project cannot run."""


def _refusing_model(key: str, cls: type) -> type:
    message = (
        f"model {key!r} ({cls.__name__} in {cls.__module__}) is a tensor2tensor model class; "
        "only this project's own 'transformer' runs here: train with --model=transformer and "
        "an hparams set (docs/porting.md)."
    )

    def refuse(*args, **kwargs):
        raise T2TModelError(message)

    return type(cls.__name__, (), {"__init__": refuse, "__doc__": message})


def register_model(name: Any = None) -> Any:
    """``@registry.register_model``: kept by name, with T2T's ``REGISTERED_NAME``
    (``_on_model_set``); constructing it is refused in one line."""

    def on_set(key: str, cls: type) -> type:
        _registry.register_model(key)(_refusing_model(key, cls))
        cls.REGISTERED_NAME = key
        return cls

    def decorate(obj, key=None):
        on_set(key or default_name(obj), obj)
        return obj

    if callable(name) and not isinstance(name, str):
        return decorate(name)
    return lambda obj: decorate(obj, name)


def problem(problem_name: str, **kwargs: Any) -> Any:
    """A fresh instance of a registered problem (T2T's ``registry.problem``)."""
    return _registry.problem(problem_name)


def hparams(name: str) -> Any:
    """The ``HParams`` the registered set ``name`` builds: T2T's ``registry.hparams`` is
    ``Registries.hparams.__getitem__``, whose ``_hparams_value_transformer`` calls the function
    and raises TypeError when it returns None (``utils/registry.py``; here
    ``registry.HParamsNoneError``, a TypeError). The project's sets have T2T 1.15's names and
    values (``hparams/transformer.py``)."""
    return _registry.hparams(name)


def base_problem(problem_name: str) -> type:
    """The registered problem *class* (T2T's ``registry.base_problem``)."""
    return _registry._lookup(_registry.PROBLEMS, problem_name)


def help_string() -> str:
    """What is registered (``--registry_help``)."""
    return _registry.help_string()


def model(name: str) -> Any:
    return _registry.model(name)


def list_hparams(prefix: str | None = None) -> list[str]:
    return [n for n in _registry.list_names(_registry.HPARAMS) if n.startswith(prefix or "")]


def list_base_problems() -> list[str]:
    return _registry.list_names(_registry.PROBLEMS)


list_problems = list_base_problems


# T2T's problem-name grammar (utils/registry.py), which the project's registry reads too.
ProblemSpec = _registry.ProblemSpec
parse_problem_name = _registry.parse_problem_name
get_problem_name = _registry.get_problem_name


def display_list_by_prefix(names_list: list[str], starting_spaces: int = 0) -> str:
    """T2T's listing: names sorted and grouped under their first "_"-separated part."""
    lines, current, space = [], None, " " * starting_spaces
    for name in sorted(names_list):
        prefix = name.split("_", 1)[0]
        if prefix != current:
            lines.append(f"{space}{prefix}:")
            current = prefix
        lines.append(f"{space}  * {name}")
    return "\n".join(lines)


def list_models() -> list[str]:
    return _registry.list_names(_registry.MODELS)


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.registry")
