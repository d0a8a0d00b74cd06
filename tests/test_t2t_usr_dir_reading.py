"""A T2T usr_dir's reading hooks run as T2T runs them (#55): tests/data/t2t_usr_dir_reading (T2T's
API only) adds an int64 field to T2T's example_reading_spec, which the model ignores, and
truncates targets in preprocess_example, a per-example map of the input pipeline in training,
evaluation and dev decodes (T2T's problem.dataset). Both train, evaluate with T2T's default
text metrics (ROUGE, top-5) and decode; what the pipeline cannot honour is refused in one
line."""

import collections
import sys
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import decoder, trainer
from t2t_repro.hparams_lib.build import create_run_hparams
from tests.t2t_fixtures import usr_dir_datagen
from tests.tools import NO_DROPOUT, PLUMBING_MODEL, SMALL_BATCH_SHUFFLE
from tests.usr_dir_registry import restored_registry

USR_DIR = Path(__file__).resolve().parent / "data" / "t2t_usr_dir_reading"
SPEC, TRUNCATED = "reading_spec_with_id", "truncated_targets"
HPARAMS_SET = "transformer_tiny_reading"
LIMIT = 4  # reading_problems.TARGET_LIMIT


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    yield from restored_registry({"t2t_usr_dir_reading", "reading_case"})


# The runs check the hooks' batches, metrics, decodes, messages.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("reading")
    (root / "tmp").mkdir()
    return usr_dir_datagen(root, USR_DIR, [SPEC, TRUNCATED])


def _rows(dataset) -> list[tuple]:
    """Every example of the batches as (inputs, targets) without padding, in order."""
    found = []
    for batch in dataset:
        for inputs, targets in zip(batch["inputs"].numpy(), batch["targets"].numpy(), strict=True):
            found.append((tuple(int(i) for i in inputs if i), tuple(int(t) for t in targets if t)))
    return found


def _batches(problem, data_dir, mode, read_mode=None):
    from t2t_repro.data.input_pipeline import make_dataset

    hp = create_run_hparams(problem, str(data_dir), HPARAMS_SET)
    read = problem.read_example_fn(read_mode or mode, hp) if read_mode != "none" else None
    pattern = problem.filepattern(str(data_dir), "train" if mode == "train" else "dev")
    return _rows(make_dataset(pattern, mode, hp, seed=1, repeat=False, read_example=read))


@pytest.mark.slow
def test_an_added_field_is_read_and_the_batches_are_those_without_it(data_dir):
    import tensorflow as tf

    from t2t_repro.data.input_pipeline import list_shards

    problem = registry.problem(SPEC)
    hp = create_run_hparams(problem, str(data_dir), HPARAMS_SET)
    read = problem.read_example_fn("train", hp)
    assert read is not None
    shards = list_shards(problem.filepattern(str(data_dir), "train"))
    record = next(iter(tf.data.TFRecordDataset(shards)))
    example = read(record)
    assert sorted(example) == ["batch_prediction_key", "inputs", "pair_id", "targets"]
    assert example["pair_id"].dtype == tf.int64 and example["pair_id"].shape == [1]
    for mode in ("train", "eval"):  # the model's features only, in the same batches
        assert _batches(problem, data_dir, mode) == _batches(problem, data_dir, mode, "none")


@pytest.mark.slow
def test_preprocess_example_truncates_the_batches_the_pipeline_yields(data_dir):
    problem = registry.problem(TRUNCATED)
    for mode in ("train", "eval"):
        plain = _batches(problem, data_dir, mode, "none")
        truncated = _batches(problem, data_dir, mode)
        assert any(len(t) > LIMIT for _, t in plain)
        assert max(len(t) for _, t in truncated) == LIMIT
        # Before the length filter and bucketing, as T2T's problem.dataset: the same examples
        # with their targets cut (EOS too), bucketed by their new lengths.
        assert collections.Counter(truncated) == collections.Counter(
            (i, t[:LIMIT]) for i, t in plain
        )
    # T2T's mode reaches the hook: dev decodes read in PREDICT mode, where it keeps them.
    assert _batches(problem, data_dir, "eval", "infer") == _batches(
        problem, data_dir, "eval", "none"
    )


def test_a_split_decode_refuses_a_preprocess_example_it_cannot_run(tmp_path):
    """A split's decodes read its text, not its records: an added spec field changes nothing
    there, a preprocess_example (T2T's decode_from_dataset runs it) is refused in one line."""
    from t2t_repro.t2t_compat.problem import T2TProblemError
    from t2t_repro.usr_dir import import_usr_dir

    import_usr_dir(str(USR_DIR))

    sources, references = registry.problem(SPEC).source_lines(str(tmp_path), "dev")
    assert len(sources) == len(references) == 20
    with pytest.raises(T2TProblemError) as refused:
        registry.problem(TRUNCATED).source_lines(str(tmp_path), "dev")
    line = str(refused.value)
    assert "\n" not in line and "overrides preprocess_example, which T2T runs" in line
    assert line.endswith("decode the split's inputs with --decode_from_file.")
    # T2T's export runs it on every served record (serving_input_fn): refused there too (the
    # export ran without it, and its check against the decoder could not see it)
    registry.problem(SPEC).check_export()
    with pytest.raises(T2TProblemError, match="which T2T's export runs on every served record"):
        registry.problem(TRUNCATED).check_export()


def test_train_eval_and_decode_refuses_it_before_training(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    argv = [
        f"--problem={TRUNCATED}",
        f"--data_dir={tmp_path / 'data'}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={USR_DIR}",
        f"--hparams_set={HPARAMS_SET}",
        "--schedule=train_eval_and_decode",
        "--train_steps=1",
    ]
    assert trainer.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("t2t-trainer: error: TruncatedTargets (truncated_targets) in ")
    assert "overrides preprocess_example" in err and "\n" not in err
    assert not (tmp_path / "train").exists()


def test_problems_without_reading_hooks_keep_the_pipelines_own_reading():
    from t2t_repro.builtin.problems.base import Problem
    from t2t_repro.t2t_compat.text_problems import Text2TextProblem

    assert Problem().read_example_fn("train", None) is None
    assert Text2TextProblem().read_example_fn("train", None) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", [SPEC, TRUNCATED])
def test_the_problem_trains_evaluates_with_rouge_and_top5_and_decodes(
    data_dir, tmp_path, name, capsys
):
    import tensorflow as tf

    common = [
        f"--problem={name}",
        f"--data_dir={data_dir}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={USR_DIR}",
    ]
    argv = [
        *common,
        f"--hparams_set={HPARAMS_SET}",
        # T2T's name of the eval tags in place of the problem's (utils/metrics.py)
        f"--hparams={PLUMBING_MODEL},{NO_DROPOUT},{SMALL_BATCH_SHUFFLE},"
        "overload_eval_metric_name=summ",
        "--train_steps=2",
        "--schedule=train_and_evaluate",
        "--local_eval_frequency=2",
        "--eval_decode_examples=2",
        "--no-attention_images",  # the heat maps: nothing here reads them (~0.6 core-s)
        "--random_seed=1",
    ]
    assert trainer.main(argv) == 0
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if s.startswith("eval at step 2:"))
    for metric in (
        "accuracy_top5",
        "rouge_2_fscore",
        "rouge_L_fscore",
        "approx_bleu_score",
        "BLEU",
    ):
        assert metric in line, line
    tags = {
        value.tag
        for event_file in (tmp_path / "train" / "eval").glob("events.*")
        for event in tf.compat.v1.train.summary_iterator(str(event_file))
        for value in event.summary.value
    }
    t2ts = ("accuracy", "accuracy_top5", "rouge_2_fscore", "rouge_L_fscore", "approx_bleu_score")
    assert {f"metrics-summ/targets/{m}" for m in t2ts} | {"loss", "bleu"} <= tags, tags
    src, decoded = tmp_path / "src.txt", tmp_path / "decoded.txt"
    src.write_text("cat dog\nsun\n", encoding="utf-8")
    flags = [f"--decode_from_file={src}", f"--decode_to_file={decoded}"]
    assert decoder.main([*common, *flags, "--decode_hparams=beam_size=1,extra_length=3"]) == 0
    assert len(decoded.read_text(encoding="utf-8").split("\n")) == 3


CASE = """
import tensorflow as tf
from tensor2tensor.data_generators import text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class ReadingCase(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {{"inputs": "abc", "targets": "ABC"}}

    {body}
"""

REFUSED = {
    "slim decoders": (
        "def example_reading_spec(self):\n"
        "        return {'targets': tf.VarLenFeature(tf.int64)}, {'targets': None}",
        "example_reading_spec() gives data_items_to_decoders (tf.contrib.slim decoders",
    ),
    "feature kind": (
        "def example_reading_spec(self):\n"
        "        return {'targets': tf.io.RaggedFeature(tf.int64)}, None",
        "example_reading_spec() reads 'targets' as RaggedFeature; only tf.io.VarLenFeature",
    ),
    "not a pair": (
        "def example_reading_spec(self):\n        return {}",
        "example_reading_spec() returned dict; as in T2T it must return (data_fields",
    ),
}


def _load_case(tmp_path, body):
    for name in [n for n in sys.modules if n.split(".")[0] == "reading_case"]:
        del sys.modules[name]
    registry._REGISTRIES[registry.PROBLEMS].pop("reading_case", None)
    path = tmp_path / "reading_case.py"
    path.write_text(CASE.format(body=body), encoding="utf-8")
    from t2t_repro.usr_dir import import_usr_dir

    import_usr_dir(str(path))
    return registry.problem("reading_case")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_spec_the_pipeline_cannot_read_is_refused_in_one_line_at_load(tmp_path, case):
    from t2t_repro.hparams_lib.build import model_hparams_for_problem
    from t2t_repro.t2t_compat.problem import T2TProblemError

    body, message = REFUSED[case]
    problem = _load_case(tmp_path, body)
    problem.get_encoders(str(tmp_path))
    model_hparams = model_hparams_for_problem("transformer_tiny", data_dir=str(tmp_path))
    with pytest.raises(T2TProblemError) as refused:
        problem.problem_hparams(str(tmp_path), model_hparams)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_examples_without_a_model_feature_are_refused_in_one_line(tmp_path):
    from t2t_repro.data.input_pipeline import EVAL, make_dataset
    from t2t_repro.data.records import serialize_example, write_records_atomically
    from t2t_repro.errors import DataError
    from t2t_repro.hparam import HParams

    problem = _load_case(
        tmp_path,
        "def preprocess_example(self, example, mode, hparams):\n"
        "        return {'inputs': example['inputs'], 'labels': example['targets']}",
    )
    shard = tmp_path / "reading_case-dev-00000-of-00001"
    write_records_atomically(str(shard), [serialize_example({"inputs": [3, 1], "targets": [4, 1]})])
    hp = HParams(batch_size=64, max_length=0, min_length_bucket=8, length_bucket_step=1.1)
    with pytest.raises(DataError) as refused:
        make_dataset(str(shard), EVAL, hp, read_example=problem.read_example_fn(EVAL, hp))
    line = str(refused.value)
    assert "\n" not in line and "give 'targets' as no such feature" in line
