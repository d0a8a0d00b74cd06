"""A --t2t_usr_dir of any name is the user's (#54): a package named ``problems``, a single file
``problems.py`` and one named ``hparams.py`` (tests/data/t2t_usr_dir_named, written only against
T2T's API) register and make byte for byte what T2T 1.15.7's datagen makes of them (the
reference in tests/data/t2t_usr_dir_named_reference was made by T2T itself:
tools/t2t_reference/make_t2t_usr_dir_reference.py). The package's corpora hold '\\r' inside
their lines: T2T reads them through tf.gfile, which drops every '\\r', so its vocabulary and
every id are T2T's. The project's own registrations live under t2t_repro.builtin, never under a
top-level name a usr_dir may have."""

import json
import shutil
import sys
import types
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIRS = HERE / "data" / "t2t_usr_dir_named"
REFERENCE = HERE / "data" / "t2t_usr_dir_named_reference"
# (usr_dir as passed to --t2t_usr_dir, the reference's folder); a single file is passed as T2T
# takes it, without its '.py' (T2T imports the name), and as a path to the file.
CASES = {
    "package named problems": (USR_DIRS / "package" / "problems", "package"),
    "file problems.py": (USR_DIRS / "file" / "problems", "file"),
    "file hparams.py": (USR_DIRS / "hparams_file" / "hparams.py", "hparams_file"),
}
GENERIC_NAMES = ("models", "utils", "data", "trainer", "config", "code")
USR_NAMES = {
    "problems",
    "hparams",
    "usr_clash",
    "tf1_optimizer_usr_dir",
    "ende_subclass_usr_dir",
    *GENERIC_NAMES,
}


@pytest.fixture(autouse=True)
def restore_registry():
    """Each test's usr_dir is imported afresh and its names are gone after it."""
    yield from restored_registry(USR_NAMES)


def _reference(folder: str) -> dict:
    return json.loads((REFERENCE / folder / "t2t_1.15.7_datagen.json").read_text("utf-8"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_usr_dir_named_like_the_projects_packages_makes_t2ts_files(case, tmp_path):
    usr_dir, folder = CASES[case]
    t2t = _reference(folder)
    shutil.copytree(REFERENCE / folder / "tmp", tmp_path / "tmp")
    argv = [
        f"--problem={','.join(t2t['problems'])}",
        f"--data_dir={tmp_path / 'data'}",
        f"--tmp_dir={tmp_path / 'tmp'}",
        f"--t2t_usr_dir={usr_dir}",
        "--noprogress",
    ]
    assert datagen.main(argv) == 0
    name = usr_dir.name.removesuffix(".py")
    module = sys.modules[name]  # the user's module under its own name, as T2T imports it
    assert Path(module.__file__).resolve().is_relative_to(USR_DIRS / folder), module.__file__
    for problem in t2t["problems"]:
        assert registry.problem(problem).__class__.__module__.split(".")[0] == name
    ours = sorted(p.name for p in (tmp_path / "data").iterdir() if "datagen.json" not in p.name)
    assert ours == t2t["files"]
    for file in t2t["files"]:
        expected = (REFERENCE / folder / "data" / file).read_bytes()
        assert (tmp_path / "data" / file).read_bytes() == expected, file
    if folder == "package":  # T2T's compiled corpora: '\r' dropped, the empty pair left out
        compiled = [p for p in t2t["tmp_files_after_datagen"] if "compiled" in p]
        assert sorted(p.name for p in (tmp_path / "tmp").glob("*compiled*")) == compiled
        lines = (tmp_path / "tmp" / "cr_translate-compiled-train.lang1").read_bytes()
        assert b"\r" not in lines and lines.count(b"\n") == 30
    if folder == "hparams_file":
        assert registry.hparams("transformer_named_hparams_tiny").num_hidden_layers == 1


def test_the_projects_registrations_take_no_top_level_name():
    import t2t_repro.builtin.hparams
    import t2t_repro.builtin.problems  # noqa: F401

    assert registry.problem("translate_ende_wmt32k").__class__.__module__.startswith(
        "t2t_repro.builtin.problems."
    )
    for name in ("problems", "hparams"):
        assert name not in sys.modules or not sys.modules[name].__name__.startswith("t2t_repro")
        owner = sys.modules.get(name)
        assert owner is None or USR_DIRS.as_posix() in Path(owner.__file__).as_posix()


def test_a_name_another_library_imported_is_the_usr_dirs_while_it_loads(tmp_path):
    from t2t_repro.usr_dir import import_usr_dir

    other = types.ModuleType("usr_clash", "a library's module of the usr_dir's name")
    sys.modules["usr_clash"] = other
    try:
        (tmp_path / "usr_clash").mkdir()
        (tmp_path / "usr_clash" / "__init__.py").write_text(
            "from usr_clash import sub  # noqa\n", encoding="utf-8"
        )
        (tmp_path / "usr_clash" / "sub.py").write_text(CLASH, encoding="utf-8")
        import_usr_dir(str(tmp_path / "usr_clash"))
        assert registry.hparams("usr_clash_hparams").num_heads == 2
        assert sys.modules["usr_clash"] is other  # the library keeps its module
    finally:
        sys.modules.pop("usr_clash", None)


@pytest.mark.parametrize("name", GENERIC_NAMES)
def test_a_usr_dir_of_a_generic_name_is_the_users(name, tmp_path):
    """As a package for some names, a single file for others; ``code`` is also the standard
    library's (set aside while the usr_dir loads when another module imported it)."""
    from t2t_repro.usr_dir import import_usr_dir

    before = sys.modules.get(name)
    source = CLASH.replace("usr_clash_hparams", f"{name}_usr_hparams")
    if len(name) % 2:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(source, encoding="utf-8")
    else:
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    import_usr_dir(str(tmp_path / name))
    assert registry.hparams(f"{name}_usr_hparams").num_heads == 2
    if before is not None:
        assert sys.modules[name] is before


CLASH = """
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_hparams
def usr_clash_hparams():
    hparams = transformer.transformer_tiny()
    hparams.num_heads = 2
    return hparams
"""

TF1_OPTIMIZER = """
import tensorflow as tf
from tensor2tensor.models import lstm  # beside the transformer sets, as public usr_dirs do
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


class LazyAdamOptimizer(tf.train.Optimizer):
    def __init__(self, learning_rate=0.001):
        super().__init__(use_locking=False, name="LazyAdam")
        self.learning_rate = learning_rate


@registry.register_hparams
def lstm_usr_set():
    hparams = lstm.lstm_seq2seq()
    return hparams


@registry.register_hparams
def transformer_usr_set():
    return transformer.transformer_tiny()
"""


def test_a_usr_dir_subclassing_tf_train_optimizer_and_importing_lstm_loads(tmp_path):
    import tensorflow

    from t2t_repro.t2t_compat.refusals import T2TApiError
    from t2t_repro.usr_dir import import_usr_dir

    (tmp_path / "tf1_optimizer_usr_dir.py").write_text(TF1_OPTIMIZER, encoding="utf-8")
    import_usr_dir(str(tmp_path / "tf1_optimizer_usr_dir.py"))
    module = sys.modules["tf1_optimizer_usr_dir"]
    assert issubclass(module.LazyAdamOptimizer, tensorflow.compat.v1.train.Optimizer)
    assert module.tf.train.Checkpoint is tensorflow.train.Checkpoint  # TF 2's stay TF 2's
    assert not hasattr(tensorflow.train, "Optimizer")  # nothing else sees the TF 1 name
    assert registry.hparams("transformer_usr_set").hidden_size == 128
    with pytest.raises(T2TApiError) as e:  # the LSTM set is refused when used, in one line
        registry.hparams("lstm_usr_set")
    assert "\n" not in str(e.value) and "models.lstm.lstm_seq2seq is not provided" in str(e.value)


ENDE_SUBCLASS = """
from tensor2tensor.data_generators import translate_ende
from tensor2tensor.utils import registry


@registry.register_problem
class TranslateEndeWmtUsr8k(translate_ende.TranslateEndeWmt32k):
    pass
"""


def test_a_usr_dir_subclassing_translate_ende_wmt32k_loads(tmp_path):
    from t2t_repro.builtin.problems.translate_wmt import TranslateEndeWmt32k
    from t2t_repro.usr_dir import import_usr_dir

    (tmp_path / "ende_subclass_usr_dir.py").write_text(ENDE_SUBCLASS, encoding="utf-8")
    import_usr_dir(str(tmp_path / "ende_subclass_usr_dir.py"))
    problem = registry.problem("translate_ende_wmt_usr8k")
    assert isinstance(problem, TranslateEndeWmt32k) and problem.name == "translate_ende_wmt_usr8k"


# T2T 1.15.7's tokenizer.corpus_token_counts(path, max_lines, split_on_newlines) of CR_TEXT, as
# T2T itself gave them (/work/venv-t2t, t2t_shim): tf.gfile's lines drop every '\r'; a whole
# file read with f.read() (no max_lines) keeps them.
CR_TEXT = b"the c\rat\r\nsees a\rdog\r\r\nend\r"
T2T_CR_COUNTS = {
    (None, True): {"adog": 1, "cat": 1, "end": 1, "sees": 1, "the": 1},
    (None, False): {
        **{"\r": 3, "\r\n": 1, "\r\r\n": 1, "a": 1, "at": 1, "c": 1, "dog": 1},
        **{"end": 1, "sees": 1, "the": 1},
    },
    (2, False): {"\n": 2, "adog": 1, "cat": 1, "sees": 1, "the": 1},
}


def test_token_counts_read_carriage_returns_as_t2t(tmp_path):
    from t2t_repro.t2t_compat import aliases

    assert aliases.install()
    from tensor2tensor.data_generators import tokenizer

    (tmp_path / "cr.txt").write_bytes(CR_TEXT)
    for (max_lines, split), expected in T2T_CR_COUNTS.items():
        counts = tokenizer.corpus_token_counts(str(tmp_path / "cr.txt"), max_lines, split)
        assert dict(counts) == expected, (max_lines, split)
