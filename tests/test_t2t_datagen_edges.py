"""Where t2t-datagen and T2T's generator_utils said "no" or ran another subset than T2T's
(an audit of T2T 1.15.7's bin/t2t_datagen.py and data_generators/generator_utils.py): a pattern
matching T2T problems not provided here, T2T's legacy generator names, the flags T2T's problem
modules and absl define (absl's --flagfile read as absl reads it), and generator_utils'
random_deinterleave, generate_files_distributed, tfrecord_iterator and make_tmp_dir. Parsers
and small files only."""

import random
import sys

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen, query_server, trainer, translate_all
from t2t_repro.commands.absl_argv import expand_flagfiles
from t2t_repro.errors import UsageError
from t2t_repro.t2t_compat import generator_utils
from tests.usr_dir_registry import restored_registry


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("t2t-datagen: error: "), err
    return err


def test_a_pattern_matching_t2ts_problems_not_provided_names_them(capsys):
    # T2T's --problem=languagemodel_en_wiki* generates 16 problems; 3 are provided here.
    assert datagen.main(["--only_list", "--problem=languagemodel_en_wiki*"]) != 0
    err = _one_line_error(capsys)
    assert "languagemodel_en_wiki_lm_multi_nli_subwords," in err and "not provided here" in err
    provided = "languagemodel_en_wiki32k,languagemodel_en_wiki64k,languagemodel_en_wiki64k_shorter"
    assert f"--problem={provided}." in err
    # Sorted and each once, as T2T's main generates them.
    assert (
        datagen.main(["--only_list", "--problem=translate_toy,algorithmic_copy,translate_toy"]) == 0
    )
    assert capsys.readouterr().out.split() == ["algorithmic_copy", "translate_toy"]
    # T2T's legacy generators (t2t_datagen.py, _SUPPORTED_PROBLEM_GENERATORS) are T2T's names.
    assert datagen.main(["--only_list", "--problem=inference_snli32k"]) != 0
    assert "_SUPPORTED_PROBLEM_GENERATORS" in _one_line_error(capsys)


@pytest.mark.parametrize(
    "module,problems",
    [(datagen, True), (trainer, True), (query_server, True), (translate_all, False)],
)
def test_flags_of_t2ts_problem_modules_and_absl_parse(module, problems, capsys):
    """absl's flags in every T2T tool; the problem modules' in those importing all_problems."""
    parser = module.build_parser()
    absl = ["--logtostderr", "--alsologtostderr=false", "--verbosity=1", "--log_dir=/tmp"]
    args = parser.parse_args(absl)
    assert args.verbosity == 1 and args.logtostderr
    modules = ["--timit_paths=a,b", "--wiki_revision_num_train_shards=3", "--nodisable_ffmpeg"]
    if problems:
        args = parser.parse_args([*modules, "--parsing_path=x"])
        assert args.wiki_revision_num_train_shards == 3 and args.parsing_path == "x"
    else:
        with pytest.raises(SystemExit):
            parser.parse_args(modules)
        capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # absl's help flags: the tool's --help
        parser.parse_args(["--helpshort"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out


def test_flagfile_is_read_as_absl_reads_it(tmp_path, capsys):
    inner = tmp_path / "inner.flags"
    inner.write_text("--problem=algorithmic_copy\n", encoding="utf-8")
    outer = tmp_path / "outer.flags"
    outer.write_text(f"# a comment\n\n// another\n--flagfile={inner}\n  --only_list  \n")
    argv = ["--data_dir=d", f"--flagfile={outer}", "--tmp_dir=t", "--", "--flagfile=x"]
    assert expand_flagfiles(argv) == [  # absl: nothing after "--" is a flag
        "--data_dir=d",
        "--problem=algorithmic_copy",
        "--only_list",
        "--tmp_dir=t",
        "--",
        "--flagfile=x",
    ]
    assert datagen.main(["--flagfile", str(outer)]) == 0
    assert capsys.readouterr().out.split() == ["algorithmic_copy"]
    inner.write_text(f"--flagfile={outer}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="reads itself"):
        expand_flagfiles([f"--flagfile={outer}"])
    with pytest.raises(SystemExit):  # as argparse refuses a flag: usage, then one line
        datagen.main([f"--flagfile={tmp_path / 'none.flags'}"])
    assert "none.flags: cannot read it" in _one_line_error(capsys)


def test_generator_utils_functions_t2t_has():
    random.seed(5)  # T2T 1.15.7's generator_utils.random_deinterleave after random.seed(5)
    assert [generator_utils.random_deinterleave("a b c d e f g h i j k l", "Y") for _ in "123"] == [
        ("a Y g h i Y l", "Y b c d e f Y j k Y"),
        ("a Y c Y e f Y l", "Y b Y d Y g h i j k Y"),
        ("a Y c d Y h i Y k l", "Y b Y e f g Y j Y"),
    ]
    random.seed(7)  # and after random.seed(7): a one-word text, then a padded one
    assert generator_utils.random_deinterleave("one") == ("one", "")
    assert generator_utils.random_deinterleave("  x y  ") == ("x X", "X y")


def test_generator_utils_files(tmp_path):
    import tensorflow as tf

    read = []

    def endless():  # T2T's generate_files_distributed reads one case past max_cases, then stops
        while True:
            read.append(len(read))
            yield {"inputs": [len(read), 2], "targets": [3]}

    path = generator_utils.generate_files_distributed(endless(), "x-train", str(tmp_path), 3, 4, 1)
    assert len(read) == 5
    assert path == str(tmp_path / "x-train-00001-of-00003")  # task 1's shard alone
    records = list(generator_utils.tfrecord_iterator([path]))
    assert len(records) == 4 and all(isinstance(r, bytes) for r in records)
    spec = {
        "inputs": tf.io.VarLenFeature(tf.int64),
        "targets": tf.io.FixedLenFeature([1], tf.int64),
    }
    first = next(generator_utils.tfrecord_iterator([path], example_spec=spec))
    assert list(first["inputs"].values) == [1, 2] and list(first["targets"]) == [3]
    made = generator_utils.make_tmp_dir(prefix="p", dir=str(tmp_path))
    assert made.startswith(str(tmp_path / "p")) and (tmp_path / made).is_dir()
    out = [str(tmp_path / "y-train-00000-of-00001")]
    assert generator_utils.generate_files(iter([{"inputs": [1]}]), out) is None  # as T2T's
    with pytest.raises(ValueError, match="empty generated field"):  # T2T's error type
        generator_utils.to_example({"inputs": []})
    # A project problem's records (its reading: int inputs and targets), by T2T's function.
    generator_utils.generate_files_distributed(
        iter([{"inputs": [5], "targets": [6, 1]}]), "translate_toy-train", str(tmp_path)
    )
    [toy] = generator_utils.tfrecord_iterator_for_problem(
        registry.problem("translate_toy"), str(tmp_path)
    )
    assert list(toy["targets"].values) == [6, 1]


def test_a_usr_dirs_problem_of_a_t2t_name_is_not_called_not_provided():
    """A name on T2T's list of problems not provided here that a usr_dir registered is the
    usr_dir's: patterns take it (registry.not_provided leaves it out)."""
    missing = registry.not_provided(registry.PROBLEMS)
    assert "wiki_revision" in missing
    registry._REGISTRIES[registry.PROBLEMS]["wiki_revision"] = object
    try:
        assert "wiki_revision" not in registry.not_provided(registry.PROBLEMS)
    finally:
        del registry._REGISTRIES[registry.PROBLEMS]["wiki_revision"]


TASKS_USR_DIR = """
from tensor2tensor.data_generators import problem
from tensor2tensor.utils import registry


@registry.register_problem
class TaskCase(problem.Problem):
    @property
    def multiprocess_generate(self):
        return {multiprocess}

    @property
    def num_generate_tasks(self):
        return 4

    def prepare_to_generate(self, data_dir, tmp_dir):
        open(data_dir + "/prepared", "w").close()

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        open(data_dir + "/task_" + str(task_id), "a").write("x")  # once a task


@registry.register_problem
class TaskChild(TaskCase):  # calls its registered base's: T2T's method, the caller's task id
    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        open(data_dir + "/child_" + str(task_id), "a").write("x")
        super(TaskChild, self).generate_data(data_dir, tmp_dir, task_id)
"""


@pytest.fixture
def task_usr_dir(tmp_path):
    """Writes the usr_dir; its registrations are gone after the test."""

    def write(multiprocess: bool):
        for name in [n for n in sys.modules if n.startswith("task_case_usr_dir")]:
            del sys.modules[name]
        path = tmp_path / "task_case_usr_dir.py"
        path.write_text(TASKS_USR_DIR.format(multiprocess=multiprocess), encoding="utf-8")
        return path

    restoring = restored_registry({"task_case_usr_dir"})
    next(restoring)
    yield write
    next(restoring, None)


TASKS = [f"task_{i}" for i in range(4)]


@pytest.mark.parametrize(
    "multiprocess,flags,written",
    [  # bin/t2t_datagen.py, generate_data_for_registered_problem
        (True, [], ["prepared", *TASKS]),
        (True, ["--task_id=2"], ["task_2"]),  # generate_data(data_dir, tmp_dir, 2) alone
        (True, ["--task_id_start=1", "--task_id_end=3"], ["prepared", "task_1", "task_2"]),
        (True, ["--task_id_end=3"], ["prepared", *TASKS]),
        (False, ["--task_id=2"], ["task_2"]),
        (False, ["--task_id_start=1", "--task_id_end=3"], ["task_None"]),
        (False, ["--task_id_start=1"], ["task_None"]),  # T2T asserts for multiprocess only
        (True, ["--task_id_start=1"], None),  # there: one line, as T2T's assert
        ("child", ["--task_id=2"], ["child_2", "task_2"]),
        ("child", [], [*(f"child_{i}" for i in range(4)), "prepared", *TASKS]),  # not 4 x 4
    ],
)
def test_task_ids_run_a_usr_dirs_generate_tasks_as_t2ts(
    task_usr_dir, tmp_path, multiprocess, flags, written, capsys
):
    usr_dir = task_usr_dir(multiprocess is not False)
    data = tmp_path / "data"
    name = "task_child" if multiprocess == "child" else "task_case"
    argv = [f"--problem={name}", f"--data_dir={data}", f"--t2t_usr_dir={usr_dir}", *flags]
    if written is None:
        assert datagen.main([*argv, "--noprogress"]) != 0
        assert "needs --task_id_end" in _one_line_error(capsys)
        return
    assert datagen.main([*argv, "--noprogress"]) == 0
    assert sorted(p.name for p in data.iterdir()) == written
    assert {p.read_text() for p in data.glob("*_*")} == {"x"}  # each task run once
    if flags and written[-1] in ("task_3", "task_None"):  # flags that select nothing: said
        assert "as in T2T" in capsys.readouterr().err


def test_task_ids_elsewhere_as_t2ts(tmp_path, capsys):
    # A problem without generate tasks writes every file, as T2T's generate_data ignores the
    # id (Text2TextProblem, AlgorithmicProblem), and says so.
    data = tmp_path / "data"
    argv = ["--problem=algorithmic_copy", f"--data_dir={data}", "--task_id=3", "--noprogress"]
    assert datagen.main([*argv, "--max_cases=5", "--num_workers=1"]) == 0
    assert "algorithmic_copy has no generate tasks" in capsys.readouterr().err
    shards = registry.problem("algorithmic_copy").num_shards  # every split's, every shard
    expected = [f"{split}-{i:05d}-of-{n:05d}" for split, n in shards.items() for i in range(n)]
    assert sorted(p.name for p in data.glob("algorithmic_copy-*")) == sorted(
        f"algorithmic_copy-{name}" for name in expected
    )


def test_a_t2t_task_id_is_not_the_encoding_pools_size(monkeypatch, tmp_path):
    """A usr_dir's own generate_data calling Text2TextProblem's (super()) passes T2T's task id,
    which T2T's ignores; outside such a call the third argument is the tools' --num_workers."""
    from t2t_repro.data import t2t_shards
    from t2t_repro.t2t_compat import text2text_problem

    pools = []
    monkeypatch.setattr(
        text2text_problem, "generate_t2t_data", lambda p, d, t, workers, **kw: pools.append(workers)
    )
    problem = registry.problem("text2text_tmpdir")
    with t2t_shards.seeded_run():  # inside the tools' run of a problem's own generate_data
        problem.generate_data(str(tmp_path), str(tmp_path), 37)
    problem.generate_data(str(tmp_path), str(tmp_path), 3)  # t2t-datagen --num_workers=3
    assert pools == [None, 3]
