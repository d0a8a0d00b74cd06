"""A module put off at start (t2t_repro/deferred_imports.py) runs at its first use, not at an
``import`` of it or a scan of ``sys.modules``; the tools start without running pyplot, and
without loading numba until a vocabulary is built or loaded."""

import subprocess
import sys

import pytest

from t2t_repro.deferred_imports import DeferredModule, defer_import
from tests.tools import PYTHON, ROOT


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``deferpkg`` whose module ``heavy`` counts its runs in the package."""
    root = tmp_path / "deferpkg"
    root.mkdir()
    (root / "__init__.py").write_text("RUNS = []\n")
    (root / "heavy.py").write_text("import deferpkg\ndeferpkg.RUNS.append(1)\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "deferpkg"]:
        del sys.modules[name]


def test_a_deferred_module_runs_at_its_first_use_only(package):
    assert defer_import("deferpkg.heavy")
    import deferpkg
    import deferpkg.heavy as heavy  # as Keras imports pyplot
    from deferpkg import heavy as same

    assert same is heavy is deferpkg.heavy and isinstance(heavy, DeferredModule)
    for module in list(sys.modules.values()):  # what scans of every module read
        getattr(module, "__file__", None), hasattr(module, "__path__")
        hasattr(module, "__wrapped__")
    assert heavy.__file__.endswith("heavy.py")
    assert deferpkg.RUNS == []
    assert heavy.VALUE == 42
    assert deferpkg.RUNS == [1]
    real = sys.modules["deferpkg.heavy"]
    assert type(real) is not DeferredModule and real.VALUE == 42 and deferpkg.heavy is real
    assert heavy.VALUE == 42 and "VALUE" in dir(heavy)  # the stand-in hands lookups on
    assert deferpkg.RUNS == [1]
    assert not defer_import("deferpkg.heavy")  # already imported


@pytest.mark.parametrize(
    "use",
    [
        "import deferpkg.heavy\nfound = deferpkg.heavy.VALUE",
        "from deferpkg.heavy import *\nfound = VALUE",
        "from deferpkg.heavy import VALUE as found",
        "import importlib\nfound = importlib.import_module('deferpkg.heavy').VALUE",
        "found = 'VALUE' in dir(__import__('deferpkg.heavy').heavy) and 42",
    ],
    ids=["package_attribute", "star", "from", "import_module", "dir"],
)
def test_every_way_of_using_a_deferred_module_runs_it_once(package, use):
    assert defer_import("deferpkg.heavy")
    namespace: dict = {}
    exec(use, namespace)
    import deferpkg

    assert namespace["found"] == 42 and deferpkg.RUNS == [1]


def test_nothing_is_deferred_that_is_not_installed(package):
    assert not defer_import("deferpkg.absent")
    assert not defer_import("no_such_package_here.module")
    assert "deferpkg.absent" not in sys.modules


PROBE = """
import sys
from t2t_repro import console
console.start_tensorflow()  # what every tool calls first
from keras.src.visualization import plot_image_gallery
print(type(sys.modules["matplotlib.pyplot"]).__name__, type(plot_image_gallery.plt).__name__)
import matplotlib.pyplot as plt
figure = plt.figure()
print(type(sys.modules["matplotlib.pyplot"]).__name__, type(figure).__name__)
"""


def test_the_tools_start_without_running_pyplot_and_it_still_works():
    """Started as every tool starts (t2t_repro/console.py; in the suite, forked from a server
    that started so): Keras is imported, pyplot not run until the program uses it."""
    out = subprocess.run(
        [*PYTHON, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["DeferredModule DeferredModule", "module Figure"], out


NUMBA_PROBE = """
import sys
import t2t_repro.text_encoding.text_encoder as text_encoder
import t2t_repro.text_encoding.token_encoder, t2t_repro.text_encoding.subword_builder
at_import = "numba" in sys.modules
encoder = text_encoder.SubwordTextEncoder.build_from_generator(["a cat", "a dog"], 20)
print(at_import, "numba" in sys.modules, encoder.decode(encoder.encode("a cat")))
"""


def test_numba_loads_with_the_first_vocabulary_not_at_import():
    """Every tool imports the problems, and with them the encoders: numba (~0.1-0.3 s of a
    start) waits until a vocabulary is built or loaded, so a refusal or --help is quicker."""
    out = subprocess.run(
        [sys.executable, "-c", NUMBA_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["False", "True", "a", "cat"], out.stdout
