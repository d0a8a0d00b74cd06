"""Real usr_dirs run unchanged (#46): what public T2T 1.x usr_dirs do that the example usr_dir
(tests/test_t2t_usr_dir.py) does not. Each usr_dir here is written for this test, against
T2T 1.15's API only."""

import sys

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data.text_files import DataError
from tests.usr_dir_registry import restored_registry

USR_NAMES = {
    "name_usr_dir",
    "boilerplate_usr_dir",
    "boilerplate_used_usr_dir",
    "ranged_usr_dir",
    "ranged_bad_usr_dir",
    "own_encoders_usr_dir",
    "random_usr_dir",
}


@pytest.fixture(autouse=True)
def restore_registry():
    """Each test's registrations and usr_dir modules are its own."""
    yield from restored_registry(USR_NAMES)


def write_usr_dir(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


NAME_USR_DIR = """
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class TranslitXxToYy(text_problems.Text2TextProblem):
    name = "xx_to_yy"

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for word in ("abc", "bcd", "cde", "def"):
            yield {"inputs": word, "targets": word.upper()}
"""


def test_the_registered_name_wins_over_a_class_attribute_name(tmp_path):
    """T2T's registry sets cls.name to the registered name, so T2T writes
    translit_xx_to_yy-*, not xx_to_yy-*."""
    usr = write_usr_dir(tmp_path, "name_usr_dir", NAME_USR_DIR)
    data = tmp_path / "data"
    argv = ["--problem=translit_xx_to_yy", f"--data_dir={data}", f"--t2t_usr_dir={usr}"]
    assert datagen.main([*argv, "--noprogress"]) == 0
    assert registry.problem("translit_xx_to_yy").name == "translit_xx_to_yy"
    assert "xx_to_yy" not in registry.list_names(registry.PROBLEMS)
    assert sorted(p.name for p in data.iterdir() if "-of-" in p.name) == [
        "translit_xx_to_yy-dev-00000-of-00001",
        "translit_xx_to_yy-train-00000-of-00002",
        "translit_xx_to_yy-train-00001-of-00002",
    ]


RANDOM_USR_DIR = """
import random

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class RandomWords(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for _ in range(8):  # drawn from the global random t2t-datagen seeds
            word = "".join(random.choice("abcdef") for _ in range(4))
            yield {"inputs": word, "targets": word.upper()}
"""


def test_a_rerun_of_a_problem_drawing_from_the_global_random_gets_the_full_runs_bytes(tmp_path):
    """A split whose shards are all kept is not generated again, unless the problem's
    generators draw from the global random (T2T's shuffle draws from it too): leaving the
    train split out would change the dev samples and every shuffle, so all is written again."""
    usr = write_usr_dir(tmp_path, "random_usr_dir", RANDOM_USR_DIR)
    data = tmp_path / "data"
    argv = ["--problem=random_words", f"--data_dir={data}", f"--t2t_usr_dir={usr}", "--noprogress"]
    assert datagen.main(argv) == 0
    full_run = {p.name: p.read_bytes() for p in data.iterdir()}
    (data / "random_words-dev-00000-of-00001").unlink()
    assert datagen.main(argv) == 0
    assert {p.name: p.read_bytes() for p in data.iterdir()} == full_run


BOILERPLATE_USR_DIR = """
from tensor2tensor import problems
from tensor2tensor.layers import common_layers
from tensor2tensor.utils import optimize, t2t_model, trainer_lib

MODULES = (problems, common_layers, optimize, t2t_model, trainer_lib)
"""


def test_notebook_boilerplate_imports_and_fails_in_one_line_when_used(tmp_path, capsys):
    from t2t_repro.errors import UserError
    from t2t_repro.usr_dir import import_usr_dir

    usr = write_usr_dir(tmp_path, "boilerplate_usr_dir", BOILERPLATE_USR_DIR)
    import_usr_dir(str(usr))
    problems, common_layers, optimize, _, trainer_lib = sys.modules["boilerplate_usr_dir"].MODULES
    for module, attr, instead in (
        (problems, "problem", "registry.problem(name)"),
        (trainer_lib, "create_hparams", "t2t-trainer"),
        (common_layers, "layer_norm", "only this project's own transformer"),
        (optimize, "optimize", "set by hparams"),
    ):
        with pytest.raises(UserError) as e:
            getattr(module, attr)()  # it imports and can be named: using it is refused
        message = str(e.value)
        assert "\n" not in message and f"{module.__name__}.{attr} is not provided" in message
        assert instead in message, message
    assert not hasattr(problems, "__path__")  # the import system's probes stay quiet

    # Used in a usr_dir at import time (a from-import too): one line from the tool.
    used = write_usr_dir(
        tmp_path,
        "boilerplate_used_usr_dir",
        "from tensor2tensor.utils.trainer_lib import create_hparams\n"
        "HPARAMS = create_hparams('transformer_base')\n",
    )
    assert datagen.main(["--problem=p", f"--data_dir={tmp_path}", f"--t2t_usr_dir={used}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "trainer_lib.create_hparams is not provided" in err, err


RANGED_USR_DIR = """
from tensor2tensor.utils import registry


@registry.register_ranged_hparams
def tiny_usr_range(rhp):
    rhp.set_float("learning_rate", 0.05, 1.0, scale=rhp.LOG_SCALE)


@registry.register_ranged_hparams("named_usr_range")
def another_range(rhp):
    rhp.set_discrete("num_heads", [2, 4])
"""


def test_ranged_hparams_register_are_listed_and_tuning_is_refused(tmp_path, capsys):
    from t2t_repro.commands import trainer
    from t2t_repro.t2t_compat import registry as t2t_registry

    usr = write_usr_dir(tmp_path, "ranged_usr_dir", RANGED_USR_DIR)
    assert datagen.main(["--registry_help", f"--t2t_usr_dir={usr}"]) == 0
    listing = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(listing) if line.startswith("Ranged hparams"))
    assert listing[start].endswith("(2):")
    assert "not supported" in listing[start]
    assert listing[start + 1 : start + 3] == ["  named_usr_range", "  tiny_usr_range"]
    assert t2t_registry.list_ranged_hparams() == ["named_usr_range", "tiny_usr_range"]
    fn = t2t_registry.ranged_hparams("tiny_usr_range")
    assert fn.__name__ == "tiny_usr_range"
    assert t2t_registry.ranged_hparams("named_usr_range").__name__ == "another_range"

    argv = [f"--output_dir={tmp_path / 'train'}", "--hparams_range=tiny_usr_range"]
    assert trainer.main([*argv, f"--t2t_usr_dir={usr}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--hparams_range: tuning with ranged hparams" in err, err
    assert "not supported" in err

    # T2T's own check: the function takes one argument, the ranges.
    bad = write_usr_dir(
        tmp_path,
        "ranged_bad_usr_dir",
        "from tensor2tensor.utils import registry\n\n"
        "@registry.register_ranged_hparams\ndef two(rhp, extra):\n    pass\n",
    )
    assert datagen.main(["--registry_help", f"--t2t_usr_dir={bad}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "must take a single argument" in err, err


TF1_PROBLEMS = """
import os

import tensorflow as tf
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry

FLAGS = tf.flags.FLAGS
LOGGED = []


@registry.register_problem
class Tf1Chars(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        path = os.path.join(tmp_dir, "words.txt")
        tf.logging.info("reading %s", path)
        assert tf.gfile.Exists(path)
        with tf.gfile.GFile(path) as f:
            for line in f:
                yield {"inputs": line.strip(), "targets": line.strip().upper()}

    def feature_encoders(self, data_dir):
        tf.logging.info("encoders of %s", self.name)
        LOGGED.append(tf.gfile.Exists(data_dir))
        return super().feature_encoders(data_dir)
"""


def test_usr_dir_code_sees_tf1_names_and_nothing_else_does(tmp_path):
    import tensorflow

    usr = tmp_path / "tf1_usr_dir"
    usr.mkdir()
    (usr / "__init__.py").write_text("from . import problems  # noqa\n", encoding="utf-8")
    (usr / "problems.py").write_text(TF1_PROBLEMS, encoding="utf-8")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "words.txt").write_text("abc\nbcd\ncde\n", encoding="utf-8")
    data = tmp_path / "data"
    argv = ["--problem=tf1_chars", f"--data_dir={data}", f"--tmp_dir={tmp}", "--noprogress"]
    assert datagen.main([*argv, f"--t2t_usr_dir={usr}"]) == 0
    assert sorted(p.name for p in data.iterdir() if "-of-" in p.name) == [
        "tf1_chars-dev-00000-of-00001",
        "tf1_chars-train-00000-of-00001",
    ]
    module = sys.modules["tf1_usr_dir.problems"]
    assert module.LOGGED == [True]  # feature_encoders ran, with tf.logging and tf.gfile
    assert module.tf.logging is tensorflow.compat.v1.logging
    assert module.tf.gfile is tensorflow.compat.v1.gfile
    assert module.tf.flags is tensorflow.compat.v1.flags
    assert module.tf.io.gfile.exists is tensorflow.io.gfile.exists  # TF 2's own names
    for name in ("logging", "gfile", "flags"):  # the tensorflow module is unchanged
        assert not hasattr(tensorflow, name), name
    assert not hasattr(sys.modules["tensorflow"], "logging")


def test_a_single_file_usr_dir_sees_tf1_names_too(tmp_path):
    import tensorflow

    from t2t_repro.usr_dir import import_usr_dir

    usr = write_usr_dir(
        tmp_path,
        "tf1_file_usr_dir",
        "import tensorflow as tf\nfrom tensorflow import gfile\n\n"
        "def logging_module():\n    import tensorflow\n    return tensorflow.logging\n",
    )
    import_usr_dir(str(usr))
    module = sys.modules["tf1_file_usr_dir"]
    assert module.gfile is tensorflow.compat.v1.gfile
    assert module.logging_module() is tensorflow.compat.v1.logging  # imports in its functions
    assert not hasattr(tensorflow, "gfile") and not hasattr(tensorflow, "logging")


OWN_ENCODERS = """
import os

from tensor2tensor.data_generators import problem, text_encoder, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class WordsOwnEncoders(text_problems.Text2TextProblem):
    # vocab_type stays at T2T's SUBWORD default: T2T never reads the .subwords file of a
    # problem that supplies its own feature_encoders.

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def feature_encoders(self, data_dir):
        words = text_encoder.TokenTextEncoder(os.path.join(data_dir, "words.vocab"))
        return {"inputs": words, "targets": words}

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for pair in (("a cat", "the cat"), ("a dog", "the dog"), ("a cat", "a dog")):
            yield {"inputs": pair[0], "targets": pair[1]}

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoders = self.feature_encoders(data_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            yield {
                "inputs": encoders["inputs"].encode(sample["inputs"]) + [text_encoder.EOS_ID],
                "targets": encoders["targets"].encode(sample["targets"]) + [text_encoder.EOS_ID],
            }


@registry.register_problem
class WordsDefaultEncoders(WordsOwnEncoders):
    feature_encoders = text_problems.Text2TextProblem.feature_encoders
"""


def test_a_problems_own_feature_encoders_need_no_vocab_file_of_t2ts_name(tmp_path):
    """T2T asks such a problem for its encoders and never for vocab.<name>.<size>.subwords:
    datagen ends with 0, and what the trainer and decoder ask for (the encoders and their
    sizes) is the problem's own. A problem on the default encoders still gets one line."""
    import tensorflow as tf

    usr = write_usr_dir(tmp_path, "own_encoders_usr_dir", OWN_ENCODERS)
    data = tmp_path / "data"
    data.mkdir()
    (data / "words.vocab").write_text("<pad>\n<EOS>\na\nthe\ncat\ndog\n", encoding="utf-8")
    argv = ["--problem=words_own_encoders", f"--data_dir={data}", "--noprogress"]
    assert datagen.main([*argv, f"--t2t_usr_dir={usr}"]) == 0
    assert not list(data.glob("*.subwords"))
    problem = registry.problem("words_own_encoders")
    assert problem.vocab_sizes(str(data)) == (6, 6)
    encoders = problem.get_encoders(str(data))
    assert encoders["targets"].encode("the dog") == [3, 5]
    shard = next(data.glob("words_own_encoders-train-*"))
    first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(str(shard)))).numpy())
    targets = list(first.features.feature["targets"].int64_list.value)
    assert targets[-1] == 1 and set(targets[:-1]) <= {2, 3, 4, 5}
    # The default encoders of a SUBWORD problem with no vocab file: one line, as before.
    default = registry.problem("words_default_encoders")
    with pytest.raises(DataError, match=r"Vocabulary file .*\.subwords not found\. Run: t2t-d"):
        default.get_encoders(str(tmp_path / "empty"))
