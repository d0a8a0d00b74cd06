"""T2T's ``hparams.json`` -> this project's hparams, as T2T 1.15.7 itself would resume it.

T2T (``utils/hparams_lib.py, create_hparams_from_json``) starts from the registered set named
by ``--hparams_set`` and overwrites every hparam that the saved JSON holds; a key the JSON
lacks (an older T2T) keeps the set's value. The import does the same with this project's
set of that name (the project's sets carry T2T 1.15's names and values).

Every T2T hparam is accounted for by the table of T2T's hparams (``t2t_repro/t2t_hparams.py``,
also for usr_dirs and ``--hparams``): ours take the JSON value; ``no effect`` ones do not change
the model or its training here (bookkeeping, other models' knobs, precision flags); a value the
table refuses (a feature not implemented, a value of an hparam not implemented here) is an
error naming it, as is an hparam this module has never heard of (``--ignore_hparams``
overrides both, for a user who accepts a model that differs from T2T's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from t2t_repro import registry, t2t_hparams
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.build import add_problem_hparams
from t2t_repro.optimizer_names import check_optimizer_name
from t2t_repro.t2t_hparams import T2T_VALUES
from t2t_repro.t2t_import.errors import T2TImportError

# What the import maps, beyond the table's rules: T2T's positional signals this project has
# (not timing_from_features). None: T2T's no positional signal ("none" here).
IMPORTABLE = {"pos": ("timing", "emb", "none", None)}


def _refused_optimizer(name) -> str:
    """Why T2T's optimizer ``name`` cannot run here ('' when it can)."""
    try:
        check_optimizer_name(name)
    except HParamsError as e:
        return str(e)
    return ""


@dataclass(frozen=True)
class ImportedHParams:
    hparams: HParams
    hparams_set: str  # This project's set the hparams are expressed against.
    overrides: str  # --hparams for t2t-trainer: set + these == hparams.
    ignored: tuple[str, ...]  # T2T hparams dropped (of no effect, or --ignore_hparams).


def our_set_name(t2t_set: str, requested: str = "") -> str:
    name = requested or t2t_set
    if not name:
        raise T2TImportError(
            "flags.txt names no --hparams_set; pass --hparams_set=<a set of "
            "this project> (e.g. transformer_base) to import against."
        )
    if name not in registry.list_names(registry.HPARAMS):
        raise T2TImportError(
            f"hparams set {name!r} (from the T2T flags) is not registered here; "
            "pass --hparams_set= with the nearest set of this project (every "
            "value in hparams.json is applied over it)."
        )
    return name


def _unsupported(t2t_values: dict[str, Any], ours: HParams, ignore: set[str]) -> list[str]:
    problems = []
    for name, value in sorted(t2t_values.items()):
        if name in ignore:
            continue
        refusal = t2t_hparams.refusal(name, value)
        if name == "optimizer" and _refused_optimizer(value):
            problems.append(f"optimizer={value!r} ({_refused_optimizer(value)})")
        elif refusal:
            problems.append(refusal.rstrip("."))
        elif name in IMPORTABLE and value not in IMPORTABLE[name]:
            problems.append(
                f"{name}={value!r} (supported: {', '.join(map(str, IMPORTABLE[name]))})"
            )
        elif name not in t2t_hparams.TABLE and name not in ours:
            problems.append(f"{name}={value!r} (unknown to this importer)")
    relative = t2t_values.get("self_attention_type") == "dot_product_relative"
    if relative and "self_attention_type" not in ignore:
        if not t2t_values.get("max_relative_position", 0) > 0:
            problems.append(
                "self_attention_type='dot_product_relative' with max_relative_position="
                f"{t2t_values.get('max_relative_position', 0)!r} (T2T refuses it too: the "
                "distance must be > 0)"
            )
    for name in ("layer_preprocess_sequence", "layer_postprocess_sequence"):
        value = t2t_values.get(name, "none")
        if name not in ignore and value != "none" and set(value) - set("nda"):
            problems.append(f"{name}={value!r} (only steps n, d, a are implemented)")
    return problems


def _overrides(base: HParams, target: HParams) -> str:
    items = []
    for name, (_, value) in base.diff(target).items():
        text = str(value)
        if "," in text:
            raise T2TImportError(
                f"hparam {name}={text!r} holds a comma and cannot be passed "
                "to --hparams; this T2T setting is not importable."
            )
        items.append(f"{name}={text}")
    return ",".join(items)


def map_hparams(
    t2t_values: dict[str, Any],
    t2t_set: str,
    problem_values: dict[str, int],
    requested_set: str = "",
    ignore: Iterable[str] = (),
) -> ImportedHParams:
    """Our hparams for a T2T run; ``problem_values`` are the vocabulary sizes and space id."""
    ignore = set(ignore)
    set_name = our_set_name(t2t_set, requested_set)
    base = registry.hparams(set_name)
    add_problem_hparams(
        base,
        problem_values["input_vocab_size"],
        problem_values["target_vocab_size"],
        problem_values["target_space_id"],
        has_input=problem_values.get("has_input"),
        class_label_target=problem_values.get("class_label_target"),
        multi_label_target=problem_values.get("multi_label_target"),
    )
    problems = _unsupported(t2t_values, base, ignore)
    if problems:
        raise T2TImportError(
            "T2T hparams that change the model are not supported: "
            + "; ".join(problems)
            + ". Pass --ignore_hparams=NAME,... to import anyway "
            "(the model will differ from T2T's)."
        )
    hp = base.copy()
    for name, value in sorted(t2t_values.items()):
        if name in ignore or name not in hp or name in problem_values:
            continue
        if name == "ffn_layer":
            value = "dense_relu_dense"
        value = T2T_VALUES.get((name, value), value)
        try:
            hp.set_hparam(name, value)
        except HParamsError as e:
            raise T2TImportError(f"hparams.json: {e}") from e
    if "target_space_vocab_size" in problem_values:
        hp.set_hparam("target_space_vocab_size", problem_values["target_space_vocab_size"])
    dropped = tuple(sorted(n for n in t2t_values if n not in hp))
    return ImportedHParams(hp, set_name, _overrides(base, hp), dropped)
