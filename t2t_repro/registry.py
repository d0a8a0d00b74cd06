"""One registry for problems, hparams sets and models, named as tensor2tensor names them.

Registration is by decorator; the default name is the snake_case of the class or function
name (``TranslateEndeWmt32k`` -> ``translate_ende_wmt32k``). Lookups of unknown names fail
with the nearest registered names, so a typo on the command line explains itself.

The registry is the only coupling between layers, problems and hparams. It imports nothing
itself: whatever registers names is imported by the layer above (the tools call
``t2t_repro.commands.builtins.register_builtins()``; ``--t2t_usr_dir`` adds a user's own), so
importing a layer never imports a problem and this module names no package above it.
"""

from __future__ import annotations

import collections
import difflib
import re
from typing import Any, TypeVar

from t2t_repro.errors import UserError

T = TypeVar("T")

PROBLEMS = "problem"
HPARAMS = "hparams"
MODELS = "model"
RANGED_HPARAMS = "ranged_hparams"

_REGISTRIES: dict[str, dict[str, Any]] = {
    PROBLEMS: {},
    HPARAMS: {},
    MODELS: {},
    RANGED_HPARAMS: {},
}


# Names another registry (T2T 1.15's) has that this project does not provide: kind -> name ->
# why, in one line (filled by ``note_not_provided``; a lookup says why instead of "Unknown").
_NOT_PROVIDED: dict[str, dict[str, str]] = {kind: {} for kind in _REGISTRIES}


class RegistryError(UserError, KeyError):
    """An unknown or duplicate registered name. A ``KeyError``, as T2T's registry raises
    (``utils/registry.py``, ``Registry.__getitem__`` and ``register``), so a usr_dir's
    ``except KeyError`` around a lookup still catches it; its text is the one-line message."""

    __str__ = BaseException.__str__  # not KeyError's quoted repr of the message


def camelcase_to_snakecase(name: str) -> str:
    """``TranslateEndeWmt32k`` -> ``translate_ende_wmt32k`` (T2T's naming rule)."""
    s1 = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s1).lower()


def _register(kind: str, name_or_obj: Any = None) -> Any:
    def decorator(obj: T, name: str | None = None) -> T:
        key = name or camelcase_to_snakecase(obj.__name__)
        registry = _REGISTRIES[kind]
        if key in registry and registry[key] is not obj:
            raise RegistryError(f"{kind} {key!r} is already registered (by {registry[key]!r}).")
        registry[key] = obj
        return obj

    if callable(name_or_obj) and not isinstance(name_or_obj, str):
        return decorator(name_or_obj)
    return lambda obj: decorator(obj, name_or_obj)


def register_problem(name_or_cls: Any = None) -> Any:
    """Class decorator: ``@register_problem`` or ``@register_problem("name")``."""
    return _register(PROBLEMS, name_or_cls)


def register_hparams(name_or_fn: Any = None) -> Any:
    """Function decorator for a zero-argument function returning an ``HParams``."""
    return _register(HPARAMS, name_or_fn)


def register_model(name_or_cls: Any = None) -> Any:
    """Class decorator for a model class constructed as ``cls(hparams, problem_info)``."""
    return _register(MODELS, name_or_cls)


def register_ranged_hparams(name_or_fn: Any = None) -> Any:
    """Function decorator for a T2T ranged-hparams function ``fn(rhp)`` (a usr_dir's tuning
    ranges): registered and listed by ``--registry_help``; tuning over them
    (T2T's ``--hparams_range``) is refused by t2t-trainer."""
    return _register(RANGED_HPARAMS, name_or_fn)


def not_provided(kind: str) -> list[str]:
    """T2T 1.15's names of ``kind`` that are not provided here (``note_not_provided``), but
    those registered since (a usr_dir's of that name)."""
    return sorted(n for n in _NOT_PROVIDED[kind] if n not in _REGISTRIES[kind])


def note_not_provided(kind: str, why_by_name: dict[str, str]) -> None:
    """Records names that T2T 1.15 registers and this project does not, with why: looking one
    up fails with that reason, not as an unknown name (a registered name always wins)."""
    _NOT_PROVIDED[kind].update(why_by_name)


def _lookup(kind: str, name: str) -> Any:
    registry = _REGISTRIES[kind]
    if name in registry:
        return registry[name]
    if name in _NOT_PROVIDED[kind]:
        raise RegistryError(
            f"{kind} {name!r} is T2T 1.15's, not provided here: {_NOT_PROVIDED[kind][name]}."
        )
    base = _variant_base(kind, name)
    if base in _NOT_PROVIDED[kind]:  # T2T's <base>_rev of a problem not provided here
        raise RegistryError(
            f"{kind} {name!r} is T2T's variant of {base!r}, which is T2T 1.15's, not provided "
            f"here: {_NOT_PROVIDED[kind][base]}."
        )
    if not registry:
        raise RegistryError(
            f"Unknown {kind} {name!r}: no {kind} is registered. Call "
            "t2t_repro.commands.builtins.register_builtins() (or import the problems and "
            "hparams packages) before looking names up."
        )
    nearest = difflib.get_close_matches(name, list(registry), n=5, cutoff=0.5)
    hint = f" Nearest registered names: {', '.join(nearest)}." if nearest else ""
    raise RegistryError(
        f"Unknown {kind} {name!r}.{hint} Run with --registry_help to list all {len(registry)}."
    )


# A problem class with this attribute true makes T2T's suffixed variants of its registered name
# as T2T's ``registry.problem`` does (``utils/registry.py``: ``parse_problem_name``, then
# ``cls(was_reversed=..., was_copy=...)``): the usr_dir classes of ``t2t_compat/problem.py``.
# The project's own problems register their ``<name>_rev`` instead
# (``problems/reversed_problem.py``).
MAKES_T2T_VARIANTS = "makes_t2t_variants"
# T2T's problem-name grammar (utils/registry.py): a base name with "_copy" and "_rev" tags
ProblemSpec = collections.namedtuple("ProblemSpec", ["base_name", "was_reversed", "was_copy"])


def parse_problem_name(name: str) -> ProblemSpec:
    """T2T's: the base name and its tags, outermost last ("x_copy_rev"); a tag given twice
    is a ValueError."""
    for tag, field in (("_rev", "was_reversed"), ("_copy", "was_copy")):
        if name.endswith(tag):
            spec = parse_problem_name(name[: -len(tag)])
            if getattr(spec, field):
                raise ValueError(f"Invalid problem name {name}: multiple '{tag}' instances")
            return spec._replace(**{field: True})
    return ProblemSpec(name, False, False)


def get_problem_name(base_name: str, was_reversed: bool = False, was_copy: bool = False) -> str:
    """T2T's inverse of ``parse_problem_name``."""
    return base_name + ("_copy" if was_copy else "") + ("_rev" if was_reversed else "")


def _variant_of(name: str) -> tuple[Any, dict] | None:
    """(the class, its flags) of T2T's ``<base>_rev`` / ``<base>_copy`` (``parse_problem_name``)
    of a registered ``base`` whose class declares ``MAKES_T2T_VARIANTS``; None for any other
    name (then an unknown name, in one line)."""
    try:
        spec = parse_problem_name(name)
    except ValueError:
        return None
    flags = {f: True for f in ("was_reversed", "was_copy") if getattr(spec, f)}
    base = _REGISTRIES[PROBLEMS].get(spec.base_name)
    if not flags or not getattr(base, MAKES_T2T_VARIANTS, False):
        return None
    return base, flags


def _t2t_variant(name: str) -> Any:
    """T2T's variant ``name`` made as T2T makes it (``_variant_of``), or None."""
    found = _variant_of(name)
    return None if found is None else found[0](**found[1])


def is_problem(name: str) -> bool:
    """Whether ``problem(name)`` names a problem: a registered one, or T2T's variant of one."""
    return name in _REGISTRIES[PROBLEMS] or _variant_of(name) is not None


def _variant_base(kind: str, name: str) -> str | None:
    """The base name of T2T's ``<base>_rev``/``<base>_copy`` problem name, else None."""
    if kind != PROBLEMS:
        return None
    try:
        base = parse_problem_name(name).base_name
    except ValueError:
        return None
    return base if base != name else None


def problem(name: str) -> Any:
    """A fresh instance of the registered problem ``name``; for a name never registered, T2T's
    suffixed variant of a registered one, where its class makes them (``_t2t_variant``): a
    registered name always wins."""
    if name not in _REGISTRIES[PROBLEMS]:
        variant = _t2t_variant(name)
        if variant is not None:
            return variant
    return _lookup(PROBLEMS, name)()


class HParamsNoneError(UserError, TypeError):
    """A registered hparams function returned None (a usr_dir's function that forgot its
    ``return``); T2T's ``_hparams_value_transformer`` (``utils/registry.py``) raises TypeError
    with this message."""


def hparams(name: str) -> Any:
    """A fresh ``HParams`` built by the registered set ``name``."""
    out = _lookup(HPARAMS, name)()
    if out is None:
        raise HParamsNoneError(
            f"HParams {name} is None. Make sure the registered function returns the HParams object."
        )
    return out


def model(name: str) -> Any:
    """The registered model class ``name``."""
    return _lookup(MODELS, name)


def list_names(kind: str) -> list[str]:
    return sorted(_REGISTRIES[kind])


def help_string() -> str:
    """Everything registered, one name a line, grouped by kind (``--registry_help``)."""
    lines = []
    for kind, title in (
        (MODELS, "Models"),
        (HPARAMS, "HParams sets"),
        (RANGED_HPARAMS, "Ranged hparams, for tuning, which is not supported here"),
        (PROBLEMS, "Problems"),
    ):
        names = list_names(kind)
        lines.append(f"{title} ({len(names)}):")
        lines.extend(f"  {n}" for n in names)
    return "\n".join(lines)
