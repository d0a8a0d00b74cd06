"""A typed hyperparameter container with T2T's ``--hparams="name=value,..."`` overrides.

Each hparam's type is fixed by its default value (int, float, bool, str, or a list of
numbers, written ``[1000,2000]`` as in T2T). Overrides are parsed against that type, so
``num_heads=eight`` or ``no_such_name=1`` fail at start-up with a message naming the hparam,
the allowed type and the nearest known names, instead of surfacing hours later.
``to_json``/``from_json`` give the ``hparams.json`` written to
``output_dir`` and reloaded on resume.

T2T 1.15's hparams that the project does not store (the table of T2T's names,
``t2t_hparams.py``: other models' knobs, features not implemented here) are accepted under
their names as T2T's ``HParams`` accepted them, so a usr_dir's hparams function or a
``--hparams`` string written for T2T runs: each is kept beside the hparams (read back as set,
never in ``to_json``), and a value that asks for an unimplemented feature is refused in
one line.

A name that is neither (``hparams.num_sampled_classes = 0`` in T2T's own
``models/transformer.py, transformer_base_v1``, and in usr_dirs that copied it) is what T2T's
``HParams`` makes of an attribute it has no ``__setattr__`` for: a plain attribute, read back
as set, not a hyperparameter (not in ``values``/``to_json``, not settable by ``--hparams``).
Nothing here reads it, so its first assignment in a process says so on stderr.
"""

from __future__ import annotations

import copy
import difflib
import json
import numbers
import sys
from collections.abc import Iterator
from typing import Any

from t2t_repro import t2t_hparams
from t2t_repro.errors import UserError

_TYPES = (bool, int, float, str, list)  # lists: of numbers, as T2T's
_ATTRIBUTES_SAID: set[str] = set()  # plain-attribute names already reported on stderr


class HParamsError(UserError, ValueError):
    """A bad hparam name, value or override string."""


class UnknownHParamError(HParamsError, KeyError):
    """A name the hparams do not have: a ``KeyError`` too, as T2T's ``set_hparam`` raises
    (``utils/hparam.py``), so a usr_dir's ``except KeyError: hp.add_hparam(...)`` works; its
    text is the one-line message."""

    __str__ = BaseException.__str__  # not KeyError's quoted repr


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number T2T's ``_cast_to_type_if_compatible`` takes it
    for (``numbers.Integral`` / ``numbers.Real``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return value
    if type(value) in (int, float):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value) if isinstance(value, numbers.Real) else value


def _list_of(name: str, values: list, element: type) -> list:
    """``values`` as a list of ``element`` (T2T's cast of each item: ints to floats for a float
    list; a float that is not a whole number refused for an int list)."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise HParamsError(f"hparam {name!r} takes a list of {element.__name__}s; got {v!r}.")
        if element is int and isinstance(v, float) and not v.is_integer():
            raise HParamsError(f"hparam {name!r} takes a list of ints; got {v!r}.")
        out.append(element(v))
    return out


def _parse_list(name: str, text: str, element: type | None = None) -> list:
    """T2T's list form ``[1000, 2000]``: items of the list's own element type (T2T's
    ``HParams.parse`` casts ``[1,2]`` to floats for a float list and refuses ``[1.5]`` for an
    int list), or, for an empty list, ints when every item is one."""
    if not (text.startswith("[") and text.endswith("]")):
        raise HParamsError(f"hparam {name!r} takes a list such as [1000,2000]; got {text!r}.")
    items = [item.strip() for item in text[1:-1].split(",") if item.strip()]
    if element in (int, float):
        try:
            return [element(i) for i in items]
        except ValueError:
            raise HParamsError(
                f"hparam {name!r} takes a list of {element.__name__}s; got {text!r}."
            ) from None
    try:
        return [int(i) for i in items]
    except ValueError:
        pass
    try:
        return [float(i) for i in items]
    except ValueError:
        raise HParamsError(f"hparam {name!r} takes a list of numbers; got {text!r}.") from None


def _split_overrides(text: str) -> list[str]:
    """``a=1,b=[1,2]`` -> ``["a=1", "b=[1,2]"]``: commas inside brackets belong to a list."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _override_name(item: str) -> str:
    return item.split("=", 1)[0].strip()


def override_names(text: str) -> list[str]:
    """The names an override string sets, in order (``"a=1,b=[1,2]"`` -> ``["a", "b"]``)."""
    return [_override_name(item) for item in _split_overrides(text or "")]


def override_text(text: str, name: str) -> str | None:
    """The text an override string gives ``name`` (its last), or None (``"a=1,b=x"``, ``b``
    -> ``"x"``)."""
    given = [
        item.split("=", 1)[1].strip()
        for item in _split_overrides(text or "")
        if "=" in item and _override_name(item) == name
    ]
    return given[-1] if given else None


def join_overrides(*parts: str) -> str:
    """Override strings in rising precedence as one: a name a later part sets replaces an
    earlier part's setting. Within one part a name given twice stays, for ``parse`` to refuse
    as T2T does; this is for strings the project adds to a user's, not for the user's own."""
    kept: list[str] = []
    for part in parts:
        items = _split_overrides(part or "")
        names = set(override_names(part))
        kept = [item for item in kept if _override_name(item) not in names] + items
    return ",".join(kept)


def _checked_t2t_only(name: str, value: Any) -> Any:
    """``value`` for a T2T name not stored here, or its one-line refusal (t2t_hparams.py)."""
    refusal = t2t_hparams.check_t2t_only(name, value)
    if refusal:
        raise HParamsError(refusal)
    return value


def _parse_value(name: str, text: str, kind: type, existing: Any = None) -> Any:
    text = text.strip()
    if kind is list:
        element = type(existing[0]) if isinstance(existing, list) and existing else None
        return _parse_list(name, text, element)
    if kind is bool:  # T2T's parse_bool (utils/hparam.py): true/True, false/False, else an int
        if text in ("true", "True"):
            return True
        if text in ("false", "False"):
            return False
        try:
            return bool(int(text))
        except ValueError:
            pass
    elif kind is int:
        try:
            return int(text)
        except ValueError:
            pass
    elif kind is float:
        try:
            return float(text)
        except ValueError:
            pass
    else:
        return text.strip("'\"")
    raise HParamsError(f"hparam {name!r} takes a value of type {kind.__name__}; got {text!r}.")


class HParams:
    """Named, typed hyperparameters. Attribute access reads them: ``hp.hidden_size``."""

    def __init__(self, **values: Any) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_t2t_only", {})  # T2T's names not stored (t2t_hparams.py)
        object.__setattr__(self, "_attributes", {})  # plain attributes, as T2T's (above)
        for name, value in values.items():
            self.add_hparam(name, value)

    # -- definition ------------------------------------------------------------------------
    def add_hparam(self, name: str, value: Any) -> None:
        if name not in self._values and t2t_hparams.is_t2t_only(name):
            return self._set_t2t_only(name, value)  # T2T's basic_params1 lacks some of them
        if name in self._values:
            raise HParamsError(f"hparam {name!r} already exists; use set_hparam to change it.")
        if name in self._attributes:  # T2T's add_hparam: "Hyperparameter name is reserved"
            raise HParamsError(f"hparam {name!r} is reserved: it was set as a plain attribute.")
        value = _plain(value)
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, _TYPES) or (
            isinstance(value, list) and not all(isinstance(v, int | float) for v in value)
        ):
            raise HParamsError(
                f"hparam {name!r} must be one of bool/int/float/str or a list of numbers; got "
                f"{value!r} ({type(value).__name__})."
            )
        self._values[name] = value

    def set_hparam(self, name: str, value: Any) -> None:
        """Set an existing hparam, checking (and where lossless, converting) the type."""
        if name not in self._values and t2t_hparams.is_t2t_only(name):
            return self._set_t2t_only(name, value)
        if value is None:  # T2T's None where this project has a named value
            value = t2t_hparams.T2T_VALUES.get((name, None), value)
        current = self._get_existing(name)
        kind = type(current)
        value = _plain(value)
        if isinstance(value, tuple):
            value = list(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if type(value) is not kind:
            raise HParamsError(
                f"hparam {name!r} has type {kind.__name__}; got {value!r} ({type(value).__name__})."
            )
        if kind is list and current:  # T2T casts each item to the list's element type
            value = _list_of(name, [_plain(v) for v in value], type(current[0]))
        self._values[name] = value

    def _set_t2t_only(self, name: str, value: Any) -> None:
        self._t2t_only[name] = _checked_t2t_only(name, value)

    def del_hparam(self, name: str) -> None:
        """Remove an hparam (T2T's ``HParams.del_hparam``: a name it lacks is no error)."""
        if name not in self._values and t2t_hparams.is_t2t_only(name):
            self._t2t_only.pop(name, None)
            return
        self._values.pop(name, None)

    def override_from_dict(self, values: dict[str, Any]) -> HParams:
        """``set_hparam`` for each item (T2T's ``HParams.override_from_dict``); returns self."""
        for name, value in values.items():
            self.set_hparam(name, value)
        return self

    def _get_existing(self, name: str) -> Any:
        if name not in self._values:
            nearest = difflib.get_close_matches(name, list(self._values), n=3, cutoff=0.6)
            hint = f" Did you mean: {', '.join(nearest)}?" if nearest else ""
            raise UnknownHParamError(f"Unknown hparam {name!r}.{hint}")
        return self._values[name]

    # -- access ----------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if t2t_hparams.is_t2t_only(name):  # as set, else T2T's value
            aside = object.__getattribute__(self, "_t2t_only")
            if name in aside:
                return aside[name]
            # a copy: T2T's {} of modality functions is the table's, not this object's
            return copy.copy(t2t_hparams.default(name))
        attributes = object.__getattribute__(self, "_attributes")
        if name in attributes:
            return attributes[name]
        raise AttributeError(f"HParams has no hparam {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._values or t2t_hparams.is_t2t_only(name):
            self.set_hparam(name, value)
            return
        if name not in _ATTRIBUTES_SAID:  # T2T's HParams: a plain attribute (module doc)
            _ATTRIBUTES_SAID.add(name)
            nearest = difflib.get_close_matches(name, list(self._values), n=3, cutoff=0.8)
            hint = f" (did you mean {', '.join(nearest)}?)" if nearest else ""
            print(
                f"hparams.{name} = {value!r}: not a hyperparameter of this set{hint}; kept as a "
                "plain attribute, as T2T's HParams keeps it (nothing reads it).",
                file=sys.stderr,
            )
        self._attributes[name] = value

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HParams) and self._values == other._values

    def __repr__(self) -> str:
        return f"HParams({', '.join(f'{k}={v!r}' for k, v in sorted(self._values.items()))})"

    def get(self, name: str, default: Any = None) -> Any:
        """The value, else ``default``; a T2T name kept beside the hparams (``t2t_hparams``)
        reads as set, else T2T's value, as T2T's ``get`` of a name its set has."""
        if name in self._values:
            return self._values[name]
        if t2t_hparams.is_t2t_only(name) and (
            name in self._t2t_only or t2t_hparams.default(name) is not None
        ):
            return getattr(self, name)
        return default

    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def copy(self) -> HParams:
        return copy.deepcopy(self)

    # -- overrides and serialisation -------------------------------------------------------
    def parse(self, overrides: str) -> HParams:
        """Apply ``"name=value,name2=value2"``; returns self. Empty string is a no-op.

        A name given twice is refused, as T2T's ``HParams.parse`` refuses it
        (``tensor2tensor/utils/hparam.py``, ``_process_scalar_value``: "Multiple assignments").
        As there, every item is read and checked before any is set: a refused string changes
        nothing."""
        values: dict[str, Any] = {}
        t2t_only: dict[str, Any] = {}
        for item in _split_overrides(overrides or ""):
            if "=" not in item:
                raise HParamsError(
                    f"Malformed hparams override {item!r}: expected name=value "
                    f'(comma-separated, e.g. --hparams="hidden_size=256,num_heads=4").'
                )
            name, text = item.split("=", 1)
            name = name.strip()
            if name in values or name in t2t_only:
                raise HParamsError(
                    f"hparams override {name!r} is given twice in {overrides!r}: give it once "
                    "(T2T's HParams.parse refuses a name assigned twice too)."
                )
            if name not in self._values and t2t_hparams.is_t2t_only(name):
                default = getattr(self, name)
                kind = type(default) if isinstance(default, _TYPES) else str
                t2t_only[name] = _checked_t2t_only(name, _parse_value(name, text, kind))
                continue
            existing = self._get_existing(name)
            value = _parse_value(name, text, type(existing), existing)
            if isinstance(value, str):  # T2T's string for a value named otherwise here
                value = t2t_hparams.T2T_VALUES.get((name, value), value)
            values[name] = value
        self._values.update(values)
        self._t2t_only.update(t2t_only)
        return self

    def diff(self, other: HParams) -> dict[str, tuple[Any, Any]]:
        """{name: (self value, other value)} for every name whose value differs."""
        names = set(self._values) | set(other._values)
        return {
            n: (self._values.get(n), other._values.get(n))
            for n in sorted(names)
            if self._values.get(n) != other._values.get(n)
        }

    def to_json(
        self, indent: int | None = 2, separators: tuple | None = None, sort_keys: bool = True
    ) -> str:
        """The stored hparams as JSON (``hparams.json``: indented, sorted); T2T's keyword
        arguments are taken (its own ``to_json(indent=0, sort_keys=True)`` call)."""
        return json.dumps(self._values, indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, text: str) -> HParams:
        """T2T's ``HParams.parse_json``: ``override_from_dict`` of a JSON object."""
        return self.override_from_dict(json.loads(text))

    @classmethod
    def from_json(cls, text: str) -> HParams:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise HParamsError(f"hparams JSON is malformed: {e}") from e
        if not isinstance(data, dict):
            raise HParamsError("hparams JSON must be an object of name: value.")
        return cls(**data)

    def override_from_json(self, text: str) -> HParams:
        """Take every value from a saved hparams.json (T2T: a saved file overrides the set)."""
        for name, value in HParams.from_json(text)._values.items():
            if name in self._values:
                self.set_hparam(name, value)
            else:
                self.add_hparam(name, value)
        return self
