"""The one table of T2T's hparams (t2t_repro/t2t_hparams.py) says the truth: every T2T 1.15
name is in it with T2T's value; no module reads a name it says has no effect; every module it
names as a reader reads the name; the sets store exactly the names it says they store; and
making a name honoured is one edit of its line. Read from the source with ``ast``: no
TensorFlow work, no model."""

import ast
import json
from pathlib import Path

import pytest

from t2t_repro import registry, t2t_hparams
from t2t_repro.hparam import HParams
from t2t_repro.t2t_hparams import ABSENT, HONOURED, NO_EFFECT, TABLE
from tests.tools import ROOT

REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "t2t_reference" / "t2t_1.15.7_hparams.json").read_text()
)
# Names hparams are read from: ``hp.name``, ``hparams["name"]``, ``model_hparams.get("name")``,
# also as attributes (``self.hparams.name``). Decode hparams (``dhp``) are another namespace.
RECEIVERS = {"hp", "hparams", "model_hparams", "problem_hparams"}
SCANNED = ("t2t_repro", "problems")
NOT_SCANNED = ("t2t_repro/t2t_hparams.py",)  # the table itself
METHODS = {name for name in dir(HParams) if not name.startswith("__")} | {"items", "keys"}


def _receiver(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in RECEIVERS
    return isinstance(node, ast.Attribute) and node.attr in RECEIVERS


def _constant(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def names_read(tree: ast.AST) -> set[str]:
    """Every hparam name the module reads (loads, not assignments; not HParams' methods)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if _receiver(node.value) and node.attr not in METHODS:
                found.add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _receiver(node.value) and _constant(node.slice):
                found.add(_constant(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and _receiver(node.func.value) and node.args:
                if _constant(node.args[0]):
                    found.add(_constant(node.args[0]))
    return found


@pytest.fixture(scope="module")
def reads() -> dict[str, set[str]]:
    """{module path relative to the repo: the names it reads}."""
    found = {}
    for part in SCANNED:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel not in NOT_SCANNED:
                found[rel] = names_read(ast.parse(path.read_text(), rel))
    return found


def test_the_scan_sees_reads_of_each_form():
    tree = ast.parse(
        "hp.a\nhparams['b']\nself.hparams.c\nmodel_hparams.get('d')\nhp.e = 1\ndhp.f\nx.g\n"
    )
    assert names_read(tree) == {"a", "b", "c", "d"}


def test_no_module_reads_a_name_of_no_effect(reads):
    no_effect = t2t_hparams.no_effect_names()
    # not vacuous: T2T has ~70 names nothing here reads (fewer as names become honoured)
    assert "moe_k" in no_effect and "dropout" in no_effect and len(no_effect) >= 60
    wrong = {path: sorted(names & no_effect) for path, names in reads.items() if names & no_effect}
    assert not wrong, f"modules read names the table says have no effect here: {wrong}"


def test_every_reader_reads_its_names(reads):
    assert "t2t_repro/learning_rate_legacy.py" in reads
    missing = [
        (name, reader)
        for name, entry in TABLE.items()
        for reader in entry.readers
        if name not in reads.get(f"t2t_repro/{reader}.py", set())
    ]
    assert not missing, f"the table names readers that do not read the name: {missing}"
    for name, entry in TABLE.items():  # honoured: read, or only the value the model has
        if entry.meaning == HONOURED:
            assert entry.readers or entry.values is not None, name
        else:
            assert not entry.readers, name


def test_every_t2t_name_once_with_t2ts_value():
    t2t = dict(REFERENCE["sets"]["transformer_base"])
    t2t.update({name: added["value"] for name, added in REFERENCE["added_names"].items()})
    assert len(t2t) >= 153 + 21 and not set(t2t) - set(TABLE)
    wrong = {n: (TABLE[n].default, v) for n, v in t2t.items() if TABLE[n].default != v}
    assert not wrong, wrong
    beyond = {n for n in TABLE if n not in t2t}  # names no T2T transformer set has
    assert {n for n in beyond if TABLE[n].default is ABSENT} == {
        "train_steps",
        "learning_rate_boundaries",
        "learning_rate_multiples",
    }
    assert all(TABLE[n].meaning != NO_EFFECT for n in beyond)


def test_the_sets_store_what_the_table_says():
    ours = registry.hparams("transformer_base")
    stored = {n for n, e in TABLE.items() if e.stored and e.default is not ABSENT}
    assert stored == {n for n in ours if n in TABLE}
    basic = set(REFERENCE["sets"]["basic_1"])
    for name in stored:  # T2T's basic_params1 has it, or the table names the set that adds it
        assert (name in basic) == (TABLE[name].added_by == ""), name
    for name in ("moe_k", "num_area_layers"):  # kept aside, T2T's value when unset
        assert name not in ours.values() and getattr(ours, name) == TABLE[name].default


def test_a_name_becomes_honoured_by_one_edit_of_its_line(monkeypatch):
    """What the optimizer work did for optimizer_momentum_nesterov (#53): the sets then store
    a name at T2T's value, --hparams and hparams.json carry it, and its refusal is gone."""
    name = "summarize_grads"
    assert t2t_hparams.is_t2t_only(name) and name not in registry.hparams("transformer_base")
    monkeypatch.setitem(TABLE, name, t2t_hparams.honoured(False, "optimizers/summaries"))
    hp = registry.hparams("transformer_base").parse(f"{name}=true")
    assert hp.values()[name] is True and json.loads(hp.to_json())[name] is True
    assert registry.hparams("basic_1").get(name) is False
    areas = "num_area_layers"
    assert t2t_hparams.refusal(areas, 8)
    monkeypatch.setitem(TABLE, areas, t2t_hparams.honoured(0, "models/transformer"))
    assert t2t_hparams.refusal(areas, 8) is None
    assert registry.hparams("transformer_base").parse(f"{areas}=8").get(areas) == 8


def test_refusals_are_one_line_and_name_what_to_use():
    for name, value, expected in (
        ("symbol_modality_skip_top", True, "only symbol_modality_skip_top=False, T2T's"),
        ("norm_type", "batch", "only T2T's layer norm is implemented); use 'layer'"),
        ("num_area_layers", 8, "only num_area_layers=0, T2T's default"),
        ("scheduled_sampling_prob", 0.1, "(T2T asserts 0 (off) or 1 (on)); use 0.0 or 1.0"),
    ):
        message = t2t_hparams.refusal(name, value)
        assert expected in message and "\n" not in message, name
    assert t2t_hparams.refusal("initializer", "orthogonal") is None  # honoured
    assert "T2T 1.15 has no other initializer" in t2t_hparams.refusal("initializer", "he")
    assert t2t_hparams.refusal("moe_k", 7) is None and t2t_hparams.refusal("not_t2t", 1) is None


def test_what_t2ts_model_reads_and_this_project_does_not_implement_is_refused():
    """T2TModel's per-feature modality overrides were accepted with no effect: a run with
    another meaning."""
    for name, value, why in (
        ("weights_fn", {"targets": print}, ""),
        ("loss", {"targets": print}, ""),
        ("bottom", {"inputs": print}, ""),
        ("top", {"targets": print}, ""),
    ):
        message = t2t_hparams.refusal(name, value)
        assert message and "does not implement" in message and why in message, name
        assert "\n" not in message and t2t_hparams.refusal(name, TABLE[name].default) is None
