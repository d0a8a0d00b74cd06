"""Nothing accepted and then ignored: every registered hparam and every flag of every tool is
read by some code (or refused in one line by a table that names it). Read from the source, so
a new hparam or flag that nothing uses fails here. No TensorFlow work: fast."""

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from tests.tools import ROOT


def sources(*parts: str, exclude: tuple[str, ...] = ()) -> dict[str, str]:
    found = {}
    for part in parts:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if not any(rel.startswith(e) for e in exclude):
                found[rel] = path.read_text()
    return found


# A name read as ``hp.name`` / ``hparams.name`` / ``dhp.name`` (also ``self.hparams.name``...),
# or string-keyed: ``.get("name"`` / ``["name"]`` / ``hparams("name"``-style. Lookaheads, so
# that overlapping reads (``hp.hparams.name``) are each found, as a search for each name finds
# them.
_ATTRIBUTE_READ = re.compile(r"(?=(?:\bhp|hparams|dhp)\.(\w+)\b)")
_KEYED_READ = re.compile(r"""(?=(?:get\(|\[)\s*["'](\w+)["'])""")


def names_read(texts: dict[str, str]) -> set[str]:
    """Every name read in ``texts`` either way, in one pass over each text (two searches a
    name and text were ~2 core-s)."""
    found = set()
    for text in texts.values():
        found.update(_ATTRIBUTE_READ.findall(text), _KEYED_READ.findall(text))
    return found


@pytest.fixture(scope="module")
def registered():
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()
    from t2t_repro import registry

    return registry


PROJECT_PACKAGES = ("t2t_repro",)


def project_names(registry, kind: str) -> list[str]:
    """The names the project itself registers: a ``--t2t_usr_dir`` another test imported in
    this process (tests/data/t2t_usr_dir) registers user code, whose hparams are the user's."""
    return [
        name
        for name in registry.list_names(kind)
        if registry._REGISTRIES[kind][name].__module__.split(".")[0] in PROJECT_PACKAGES
    ]


def all_hparam_names(registry) -> dict[str, str]:
    """{name: where it comes from}: every registered set, the decode hparams (built-in and
    the problems'), the problems' hparams."""
    from t2t_repro.decoding.line_decoder import DECODE_DEFAULTS
    from t2t_repro.hparams_lib.build import PROBLEM_HPARAMS

    names = {}
    for set_name in project_names(registry, registry.HPARAMS):
        for name in registry.hparams(set_name):
            names.setdefault(name, f"hparams set {set_name}")
    for name in DECODE_DEFAULTS:
        names.setdefault(name, "decode hparams")
    for problem_name in project_names(registry, registry.PROBLEMS):
        for name in getattr(registry.problem(problem_name), "decode_defaults", None) or {}:
            names.setdefault(name, f"{problem_name}'s decode hparams")
    for name in PROBLEM_HPARAMS:
        names.setdefault(name, "problem hparams")
    return names


def test_every_hparam_is_read_or_refused(registered):
    from t2t_repro.hparams_lib.unimplemented import CHECKED
    from t2t_repro.t2t_hparams import no_effect_names

    # The code that uses hparams; not the sets' definitions, nor the T2T-import name tables.
    texts = sources(
        "t2t_repro",
        "problems",
        exclude=(
            "t2t_repro/t2t_import/hparams_map.py",
            "t2t_repro/hparams_lib/unimplemented.py",  # reads the table's names
            "t2t_repro/t2t_hparams.py",
        ),
    )
    refused = set(CHECKED)  # read by the refusal, through the table's values
    # the table's "no effect" names (``dropout`` among them: T2T's basic_params1 gives every
    # model one, its transformer's dropouts are the *_dropout ones; any value accepted, #47)
    ignored_as_in_t2t = no_effect_names()
    names = all_hparam_names(registered)
    assert len(names) > 50 and "hidden_size" in names and "beam_size" in names
    read = names_read(texts)
    unread = {
        name: origin
        for name, origin in names.items()
        if name not in refused and name not in ignored_as_in_t2t and name not in read
    }
    assert not unread, f"hparams nothing reads (implement, or refuse in t2t_hparams.py): {unread}"


def test_every_registered_set_is_implemented(registered):
    """The registered sets themselves pass the refusal, basic_1 too (T2T's base of all
    models: its orthogonal initializer and weight decay are honoured)."""
    from t2t_repro.hparams_lib.unimplemented import check_implemented

    for set_name in project_names(registered, registered.HPARAMS):
        check_implemented(registered.hparams(set_name), set_name)


def test_refused_hparams_name_what_to_use(registered):
    from t2t_repro.hparam import HParamsError
    from t2t_repro.hparams_lib import checks

    hp = registered.hparams("transformer_tiny")
    for override, expected in (
        ("sampling_method=random_per_example", "not supported .random: draw each token"),
        ("norm_type=batch", "layer norm"),
        ("initializer=he_normal", "not supported .T2T 1.15 has no other initializer.; use "),
        ("initializer_gain=0", "initializer=uniform_unit_scaling needs initializer_gain > 0"),
    ):
        with pytest.raises(HParamsError, match=expected):
            checks.validate(hp.copy().parse(override), training=True)
    # T2T's initializers are honoured (t2t_repro/layers/initializers.py).
    checks.validate(hp.copy().parse("initializer=orthogonal,initializer_gain=1.5"), training=True)
    # T2T's L2 weight decay is honoured (t2t_repro/optimizers/regularization.py).
    checks.validate(hp.copy().parse("weight_decay=0.0001"), training=True)
    with pytest.raises(HParamsError, match="sampling"):
        checks.validate(hp.copy().parse("sampling_method=random_per_example"))
    checks.validate(hp.copy().parse("sampling_method=random,sampling_temp=0.5"))
    checks.validate(hp.copy().parse("initializer=xavier,initializer_gain=2.0"), training=True)


TOOL_MODULES = (
    "attention avg_all bleu datagen decoder evalb exporter quickstart query_server t2t_import "
    "trainer translate_all".split()
)


def flag_dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.dest != "help" and a.help != argparse.SUPPRESS}


@pytest.mark.parametrize("tool", TOOL_MODULES)
def test_every_flag_is_read(tool):
    """Each dest is read by its command (``args.x``, ``"x"`` keys of ``vars(args)``), by the
    shared ``cli.py``, or by the T2T tables' check; a trainer flag that becomes a
    ``TrainerConfig`` field must be read as ``cfg.x`` by the training code."""
    import importlib

    from t2t_repro.training.config import TrainerConfig

    module = importlib.import_module(f"t2t_repro.commands.{tool}")
    parser = module.build_parser()
    parser.add_argument("--verbose")  # cli.run adds it
    command = (ROOT / "t2t_repro/commands" / f"{tool}.py").read_text()
    shared = (ROOT / "t2t_repro/commands/cli.py").read_text()
    cluster = (ROOT / "t2t_repro/training/cluster/cluster_flags.py").read_text()
    training = sources("t2t_repro/training", "t2t_repro/checkpoints", "t2t_repro/decoding")
    fields = {f.name for f in dataclasses.fields(TrainerConfig)}
    table = {f.dest for f in getattr(parser, "t2t_flags", ())}
    dests = flag_dests(parser) | table
    unread = []
    for dest in sorted(dests):
        if dest in table:
            continue  # refused unless at T2T's default, or accepted with a reason (tested)
        if tool == "trainer" and dest in fields:
            if not any(re.search(rf"\bcfg\.{dest}\b", t) for t in training.values()):
                unread.append(f"{dest} (TrainerConfig field no cfg.{dest} reads)")
            continue
        patterns = (rf"\bargs\.{dest}\b", rf"[\"']{dest}[\"']")
        texts = [command, shared] + ([cluster] if tool == "trainer" else [])
        if not any(re.search(p, t) for p in patterns for t in texts):
            unread.append(dest)
    assert not unread, f"t2t-{tool} flags nothing reads: {unread}"


def test_the_walk_sees_every_t2t_table_flag():
    """The table flags are hidden from --help's option list (named in its group text); the
    walk above must still count them."""
    from t2t_repro.commands import trainer

    parser = trainer.build_parser()
    assert "tpu_num_shards" in {f.dest for f in parser.t2t_flags}
    assert Path(ROOT / "t2t_repro/commands/t2t_flags.py").exists()
