"""Every library module of T2T 1.15.7's wheel imports under T2T's name (#54): the list is the
wheel's (tests/data/t2t_1.15.7_modules.json, tools/t2t_reference/list_t2t_modules.py). A module
this project does not provide imports, and each of its names fails in one line when used,
naming what to use here; T2T's problem classes implemented here are the project's; T2T's
scripts and its rl, envs and insights packages refuse in one line at import."""

import importlib
import json
from pathlib import Path

import pytest

from t2t_repro.t2t_compat import aliases, t2t_modules
from t2t_repro.t2t_compat.refusals import T2TApiError

RECORDED = json.loads(
    (Path(__file__).resolve().parent / "data" / "t2t_1.15.7_modules.json").read_text("utf-8")
)


@pytest.fixture(scope="module", autouse=True)
def edge():
    from t2t_repro.usr_dir import import_usr_dir  # noqa: F401  (installs as a usr_dir does)

    assert aliases.install()


def test_the_edge_lists_exactly_t2ts_library_modules():
    assert RECORDED["tensor2tensor"] == "1.15.7" and len(RECORDED["library"]) == 268
    assert t2t_modules.LIBRARY == set(RECORDED["library"])
    assert t2t_modules.PACKAGES == set(RECORDED["packages"])
    assert t2t_modules.NAMES_NOT_MODULES == {
        module.removeprefix("tensor2tensor."): " ".join(names)
        for module, names in RECORDED["names_not_modules"].items()
    }
    assert set(aliases.ALIASES) <= t2t_modules.LIBRARY


def test_every_library_module_imports_and_its_names_refuse_in_one_line_when_used():
    refused = 0
    for name in RECORDED["library"]:
        module = importlib.import_module(name)
        if name in aliases.ALIASES:  # this project's module of T2T's names
            assert module.__name__ == aliases.ALIASES[name]
            continue
        assert module.__name__ == name
        if name in t2t_modules.PACKAGES:
            continue
        stand_in = module.some_t2t_function  # any name: it can be named and imported
        with pytest.raises(T2TApiError) as e:
            stand_in(1)
        message = str(e.value)
        assert "\n" not in message and message.startswith(f"{name}.some_t2t_function "), message
        assert t2t_modules.instead(name) in message
        refused += 1
    assert refused == 268 - len(aliases.ALIASES) - len(t2t_modules.PACKAGES)


def test_a_package_gives_its_modules_and_nothing_else():
    import tensor2tensor.models
    from tensor2tensor.models import lstm
    from tensor2tensor.models.research import universal_transformer

    assert tensor2tensor.models.lstm is lstm and universal_transformer.__name__.endswith("former")
    with pytest.raises(ImportError) as e:
        from tensor2tensor.models import no_such_model  # noqa: F401
    assert "tensor2tensor.models.no_such_model is not a module of tensor2tensor 1.15" in str(
        e.value
    )


def test_t2ts_problem_classes_implemented_here_are_the_projects():
    from tensor2tensor.data_generators import translate_ende, translate_enfr, wsj_parsing

    from t2t_repro import registry
    from t2t_repro.builtin.problems import translate_wmt
    from t2t_repro.t2t_compat import wsj_parsing as t2ts_wsj_parsing

    assert translate_ende.TranslateEndeWmt32k is translate_wmt.TranslateEndeWmt32k
    assert translate_ende.TranslateEndeWmt8k is translate_wmt.TranslateEndeWmt8k
    assert translate_enfr.TranslateEnfrWmt32k is translate_wmt.TranslateEnfrWmt32k
    # T2T's wsj_parsing module is T2T's (its problem reads T2T's tree files), not the paper's.
    assert wsj_parsing is t2ts_wsj_parsing and registry.problem("wsj_parsing").__class__ is (
        wsj_parsing.WsjParsing
    )
    assert translate_enfr.TranslateEnfrWmt8k is translate_wmt.TranslateEnfrWmt8k
    assert translate_ende.TranslateEndeWmtCharacters().vocab_type == "character"  # compat's
    assert translate_ende.TranslateEndeWmt32kPacked().packed_length == 256  # packed_problems'
    with pytest.raises(T2TApiError) as e:  # the module's other names are T2T's, not here:
        list(translate_ende._ENDE_TRAIN_DATASETS)  # a list of corpora, used as one
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["bin.t2t_trainer", "rl.trainer_model_based", "envs", "insights"])
def test_scripts_and_rl_packages_refuse_in_one_line_at_import(name):
    assert f"tensor2tensor.{name}" in RECORDED["refused"]
    with pytest.raises(ModuleNotFoundError) as e:
        importlib.import_module(f"tensor2tensor.{name}")
    message = str(e.value)
    package = ".".join(f"tensor2tensor.{name}".split(".")[:2])
    assert "\n" not in message and message.startswith(f"{package} is not provided"), message


def test_a_t2t_modules_imports_of_other_t2t_modules_are_those_modules():
    """T2T's modules import one another by last name, and usr_dirs read them through them:
    the public MTet usr_dir writes ``translate_envi.problem.DatasetSplit.TRAIN``."""
    from tensor2tensor.data_generators import algorithmic, problem, translate_envi
    from tensor2tensor.utils import registry as t2t_registry

    assert translate_envi.problem is problem  # a module of stand-ins and provided classes
    assert translate_envi.problem.DatasetSplit.TRAIN == "train"
    assert algorithmic.registry is t2t_registry  # a module provided whole
    from tensor2tensor import problems  # whose problem() is its own, T2T's function

    assert problems.problem is not problem
    with pytest.raises(AttributeError):  # a name that is no module of T2T's stays unknown
        algorithmic.not_a_t2t_name  # noqa: B018
