"""T2T 1.15's text iterators and its TextConcat2ClassProblem and ChoppedTextProblem, as a
usr_dir uses them (tests/data/t2t_usr_dir_text_kinds, written only against T2T's API): each
gives what T2T 1.15.7 gives from the same files (the reference, made by T2T itself:
tools/t2t_reference/make_t2t_text_kinds_reference.py). A problem on a T2T base this project
does not provide registers beside runnable ones and is refused in one line when used."""

import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data import records
from t2t_repro.t2t_compat import aliases
from t2t_repro.t2t_compat.problem import T2TProblemError
from t2t_repro.t2t_compat.refusals import T2TApiError
from tests.t2t_fixtures import usr_dir_datagen
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIR = HERE / "data" / "t2t_usr_dir_text_kinds"
REFERENCE = HERE / "data" / "t2t_usr_dir_text_kinds_reference"
TMP = REFERENCE / "tmp"
T2T = json.loads((REFERENCE / "t2t_1.15.7_text_kinds.json").read_text(encoding="utf-8"))
LABELS = ["entailment", "neutral", "contradiction"]
STAND_IN = "stand_in_usr_dir"


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    """The usr_dirs' names are registered for this module only."""
    yield from restored_registry({"t2t_usr_dir_text_kinds", STAND_IN})


@pytest.fixture(scope="module")
def text_problems():
    assert aliases.install()
    from tensor2tensor.data_generators import text_problems

    return text_problems


def test_the_iterators_read_what_t2ts_read(text_problems):
    """Every iterator T2T's text_problems has (the audit found six refused, saying that only
    Text2TextProblem runs here) gives T2T 1.15.7's samples from the same files."""
    source = str(TMP / "iter_source.txt")
    runs = {
        "text2self_txt_iterator": text_problems.text2self_txt_iterator(source),
        "text2class_txt_iterator": text_problems.text2class_txt_iterator(
            source, str(TMP / "iter_int_labels.txt")
        ),
        "text2class_txt_iterator_class_strs": text_problems.text2class_txt_iterator(
            str(TMP / "premises.txt"), str(TMP / "labels.txt"), class_strs=LABELS
        ),
        "txt_and_label_iterator": text_problems.txt_and_label_iterator(str(TMP / "iter_extra.txt")),
        "text2text_txt_iterator_with_label": text_problems.text2text_txt_iterator_with_label(
            source, str(TMP / "iter_extra.txt")
        ),
        "text2text_txt_iterator_with_index": text_problems.text2text_txt_iterator_with_index(
            source, str(TMP / "hypotheses.txt")
        ),
        "text2real_txt_iterator": text_problems.text2real_txt_iterator(
            source, str(TMP / "iter_real.txt")
        ),
    }
    assert set(runs) == set(T2T["iterators"])
    for name, samples in runs.items():
        assert list(samples) == T2T["iterators"][name], name


@pytest.mark.parametrize(
    ("iterator", "text", "kind", "says"),
    [
        ("txt_and_label_iterator", "no label here\n", ValueError, "Extra_Label: <int_label>"),
        ("text2class_txt_iterator", "two\n", ValueError, "is not an integer"),
        ("text2class_txt_iterator_class_strs", "maybe\n", KeyError, "not one of class_strs"),
        ("text2real_txt_iterator", "1.0  2.0\n", ValueError, "single spaces"),
    ],
)
def test_a_line_t2t_cannot_read_is_one_line_of_t2ts_error_type(
    text_problems, tmp_path, iterator, text, kind, says
):
    """T2T raises ValueError (KeyError for an unknown class name); here the same types, in one
    line naming the file and line, so a usr_dir's except still catches them."""
    source, other = tmp_path / "source.txt", tmp_path / "other.txt"
    source.write_text("a text\n", encoding="utf-8")
    other.write_text(text, encoding="utf-8")
    calls = {
        "txt_and_label_iterator": lambda: text_problems.txt_and_label_iterator(str(other)),
        "text2class_txt_iterator": lambda: text_problems.text2class_txt_iterator(
            str(source), str(other)
        ),
        "text2class_txt_iterator_class_strs": lambda: text_problems.text2class_txt_iterator(
            str(source), str(other), class_strs=LABELS
        ),
        "text2real_txt_iterator": lambda: text_problems.text2real_txt_iterator(
            str(source), str(other)
        ),
    }
    with pytest.raises(kind) as raised:
        list(calls[iterator]())
    message = str(raised.value)
    assert says in message and f"{other}, line 1" in message and "\n" not in message


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """t2t-datagen of the usr_dir's two problems, from the reference's texts."""
    root = tmp_path_factory.mktemp("text_kinds")
    shutil.copytree(TMP, root / "tmp")
    return usr_dir_datagen(root, USR_DIR, ["paired_claims", "chopped_stories"])


@pytest.mark.parametrize("problem", ["paired_claims", "chopped_stories"])
def test_datagen_writes_t2ts_vocabulary_and_examples(generated, problem):
    """TextConcat2ClassProblem (its texts joined by '$''s first id, its vocabulary from T2T's
    loop, whose break lets only each premise in past max_samples_for_vocab): T2T's vocab file
    and every shard's examples in T2T's order. ChoppedTextProblem (whole files cut into 8
    ids, the last padded, dev cut to max_dev_chars): T2T's vocab file and every shard's
    examples; their order is T2T's pool worker's draw, which Python reseeds from the OS, so
    T2T's own runs differ in it (here the shuffles draw from --random_seed)."""
    expected = T2T["datagen"][problem]
    mine = (f"{problem}-", f"vocab.{problem}.")  # beside T2T's, the project's manifest
    ours = sorted(p.name for p in generated.iterdir() if p.name.startswith(mine))
    assert ours == expected["files"]
    vocab = (generated / expected["vocab_file"]).read_bytes().decode("utf-8")
    assert vocab == expected["vocab"]
    in_order = problem == "paired_claims"
    for shard, examples in expected["shards"].items():
        found = records.read_examples(str(generated / shard), sorted(examples[0]))
        if not in_order:
            found, examples = sorted(found, key=str), sorted(examples, key=str)
        assert found == examples, shard


def test_chopped_text_reads_as_a_language_model_of_its_sequence_length(generated):
    """Targets only, no EOS, sequence_length ids: the trainer keeps them (T2T's max_length is
    sequence_length) and a split's decodes or a task-less generate_data are one line."""
    from t2t_repro.hparams_lib.build import model_hparams_for_problem

    problem = registry.problem("chopped_stories")
    hp = model_hparams_for_problem("transformer_tiny", data_dir=str(generated))
    assert not problem.has_inputs and problem.max_length(hp) == 8
    found = problem.problem_hparams(str(generated), hp)
    assert found["has_input"] is False and found["target_vocab_size"] == 147  # T2T reads 147
    with pytest.raises(T2TProblemError, match="--decode_from_file") as refused:
        problem.source_lines(str(TMP), "dev")
    assert "\n" not in str(refused.value)
    with pytest.raises(T2TProblemError, match="task id from 0 to 2 .* not -1"):
        problem.generate_data(str(generated), str(TMP))  # as t2t-trainer calls it
    concat = registry.problem("paired_claims")
    with pytest.raises(T2TProblemError, match="'\\$''s id"):
        concat.check_split_decodes()


STAND_IN_SOURCE = """
from tensor2tensor.data_generators import text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class FineLm(text_problems.Text2SelfProblem):
    @property
    def is_generate_per_split(self):
        return False

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {"targets": "abc"}


@registry.register_problem
class SplitOverTasks(text_problems.DistributedText2TextProblem):
    pass
"""


def test_a_problem_on_a_base_not_provided_registers_and_is_refused_when_used(
    tmp_path, capsys, text_problems
):
    """The audit's usr_dir failed to import at @register_problem (ChoppedTextProblem's
    stand-in was read there), taking its runnable problem with it: now the usr_dir imports,
    the other problem runs, and datagen of the stand-in's subclass is one line."""
    from t2t_repro.usr_dir import import_usr_dir

    path = tmp_path / f"{STAND_IN}.py"
    path.write_text(STAND_IN_SOURCE, encoding="utf-8")
    import_usr_dir(str(path))
    assert registry.problem("fine_lm").name == "fine_lm"
    assert "split_over_tasks" in registry.list_names(registry.PROBLEMS)
    with pytest.raises(T2TApiError):
        registry.problem("split_over_tasks")
    argv = [f"--data_dir={tmp_path / 'data'}", f"--t2t_usr_dir={path}", "--noprogress"]
    assert datagen.main(["--problem=split_over_tasks", *argv]) == 1
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "DistributedText2TextProblem is not provided" in line
    assert datagen.main(["--problem=fine_lm", *argv]) == 0
