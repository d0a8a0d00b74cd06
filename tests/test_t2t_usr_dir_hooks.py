"""A T2T usr_dir's Problem hooks and T2T's vocab-file quirk (#46): tests/data/t2t_usr_dir_hooks is
written only against T2T's API; t2t-datagen writes what T2T 1.15.7 writes from it, and its
problems' hparams are the ones T2T's t2t-trainer gives the model (the reference in
tests/data/t2t_usr_dir_hooks_reference was made by T2T itself:
tools/t2t_reference/make_t2t_usr_dir_reference.py). Hooks this project cannot honour are refused
in one line, and an error raised by a usr_dir's own code is one line naming its file, line and
problem."""

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen, decoder, trainer
from t2t_repro.hparams_lib.build import create_run_hparams, model_hparams_for_problem
from t2t_repro.t2t_compat.problem import T2TProblemError
from tests.t2t_fixtures import usr_dir_datagen
from tests.tools import SMALL_BATCH_SHUFFLE
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIR = HERE / "data" / "t2t_usr_dir_hooks"
REFERENCE = HERE / "data" / "t2t_usr_dir_hooks_reference"
T2T = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text(encoding="utf-8"))
CHARS, NEWLINES, HOOK = T2T["problems"]
HPARAMS_SET = T2T["hparams_set"]
INLINE = "hook_case_usr_dir"


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    """The usr_dirs' names are registered for this module only."""
    yield from restored_registry({"t2t_usr_dir_hooks", INLINE})


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """t2t-datagen of the usr_dir's three problems, from the reference's inputs."""
    root = tmp_path_factory.mktemp("hooks")
    shutil.copytree(REFERENCE / "tmp", root / "tmp")
    return usr_dir_datagen(root, USR_DIR, T2T["problems"])


@pytest.mark.slow
def test_datagen_writes_byte_for_byte_what_t2t_1_15_7_writes(generated):
    """The vocab file with its '\\n' subtoken over two lines, the train shards encoded with the
    vocabulary as built, the eval shard with the vocabulary as T2T reads that file back (a
    file a split): every id T2T's."""
    expected = sorted(p.name for p in (REFERENCE / "data").iterdir())
    assert expected == T2T["files"]
    # beside T2T's files only the project's manifest of each problem (data/datagen_engine.py)
    ours = sorted(p.name for p in generated.iterdir() if not p.name.endswith(".datagen.json"))
    assert ours == expected
    for name in expected:
        assert (generated / name).read_bytes() == (REFERENCE / "data" / name).read_bytes(), name
    vocab = (generated / f"vocab.{NEWLINES}.128.subwords").read_bytes()
    assert b"\n'\n'\n'\t'\n" in vocab  # '\n' then '\t', as T2T writes them


def test_the_vocab_file_t2t_wrote_reads_back_as_t2t_reads_it():
    """T2T's own file: one subtoken a line, so '\\n' becomes two empty subtokens and the '\\t'
    after it takes the next id (the reference's eval shard has that id, its train shards the
    one before)."""
    from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder

    encoder = SubwordTextEncoder(str(REFERENCE / "data" / f"vocab.{NEWLINES}.128.subwords"))
    assert encoder.vocab_size == T2T["problem_hparams"][NEWLINES]["vocabulary_sizes"]["inputs"]
    strings = encoder.all_subtoken_strings
    assert strings[-3:] == ("", "", "\t")
    tab = len(strings) - 1
    ids = {
        split: {i for p in (REFERENCE / "data").glob(f"{NEWLINES}-{split}-*") for i in _ids(p)}
        for split in ("train", "dev")
    }
    assert tab in ids["dev"] and tab not in ids["train"] and tab - 1 in ids["train"]


def _ids(path):
    import tensorflow as tf

    for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
        yield from tf.train.Example.FromString(record).features.feature["inputs"].int64_list.value


@pytest.mark.slow
def test_problem_hparams_are_the_ones_t2ts_trainer_gives_the_model(generated):
    """hparams(defaults, model_hparams) asked with the run's model hparams (the hook reads
    hidden_size, shared_embedding_and_softmax_weights and data_dir), every field honoured:
    vocab sizes, target space, loss multiplier (2 for CHARACTER, T2T's Text2TextProblem),
    batch_size_multiplier."""
    data = str(generated)
    for name in T2T["problems"]:
        t2t = T2T["problem_hparams"][name]
        problem = registry.problem(name)
        hp = create_run_hparams(problem, data, HPARAMS_SET)
        assert hp.input_vocab_size == t2t["vocab_size"]["inputs"], name
        assert hp.target_vocab_size == t2t["vocab_size"]["targets"], name
        assert hp.target_space_id == t2t["target_space_id"], name
        assert hp.get("loss_multiplier", 1.0) == t2t["loss_multiplier"], name
        assert problem.batch_size_multiplier == t2t["batch_size_multiplier"], name
        assert t2t["modality"] == {"inputs": "symbol", "targets": "symbol"}
        if t2t["loss_multiplier"] == 1.0:
            assert "loss_multiplier" not in hp  # the run's hparams.json as it was
    assert T2T["problem_hparams"][CHARS]["loss_multiplier"] == 2.0
    # The model hparams the hook saw are a copy: the run's have no data_dir.
    assert "data_dir" not in create_run_hparams(registry.problem(HOOK), data, HPARAMS_SET)
    assert model_hparams_for_problem(HPARAMS_SET, data_dir=data).data_dir == data


@pytest.mark.slow  # two eager training updates of a one-layer model
def test_the_loss_multiplier_scales_the_training_loss_as_t2t(generated):
    """T2T multiplies the loss numerator (t2t_model.py, _loss_single): the CHARACTER problem's
    first update logs twice the loss, and its gradient norm is twice, of the same run without
    the multiplier (the same seeds, weights and dropout; scaling by 2 is exact in binary
    floating point: the same computation, so the equalities are exact)."""
    import keras

    from t2t_repro.data.input_pipeline import TRAIN, make_dataset
    from t2t_repro.optimizers import make_optimizer
    from t2t_repro.training.loop.train_step import make_replica_update

    problem = registry.problem(CHARS)
    scaled = create_run_hparams(problem, str(generated), HPARAMS_SET, SMALL_BATCH_SHUFFLE)
    plain = scaled.copy()
    plain.del_hparam("loss_multiplier")
    pattern = problem.filepattern(str(generated), "train")
    batch = next(iter(make_dataset(pattern, TRAIN, plain, seed=1)))
    found = []
    for hp in (plain, scaled):
        keras.utils.set_random_seed(1)
        model = registry.model("transformer")(hp)
        model.build()
        optimizer = make_optimizer(hp)
        optimizer.build(model.trainable_variables)
        update = make_replica_update(model, optimizer, hp, num_replicas=1)  # eager: no trace
        found.append({k: float(v) for k, v in update(batch).items()})
    assert found[0]["loss"] > 0
    assert found[1]["loss"] == 2 * found[0]["loss"]
    assert found[1]["grad_norm"] == 2 * found[0]["grad_norm"]
    assert found[1]["target_tokens"] == found[0]["target_tokens"]


def test_the_eval_loss_is_scaled_as_t2ts_and_its_perplexity_is_not():
    """T2T's eval loss is the model's loss (scaled); neg_log_perplexity is a metric of the
    logits (utils/metrics.py), not scaled."""
    import tensorflow as tf

    from t2t_repro.training.loop import evaluation

    @tf.function
    def eval_step(batch):
        sums = {"xent": 7.5, "tokens": 3.0, "correct": 1.0, "sequences": 1.0}
        return {**{k: tf.constant(v) for k, v in sums.items()}, "correct_sequences": batch * 0}

    dev = tf.data.Dataset.from_tensors(tf.constant(0.0))
    plain = evaluation.evaluate(eval_step, dev)
    scaled = evaluation.evaluate(eval_step, dev, loss_multiplier=2.0)
    assert plain["loss"] == 2.5 and scaled["loss"] == 5.0
    assert scaled["neg_log_perplexity"] == plain["neg_log_perplexity"] == -2.5
    assert scaled["perplexity"] == plain["perplexity"]


def test_the_eval_loss_is_the_mean_of_the_batches_losses_as_t2ts_estimator():
    """Estimator's ``loss`` metric is tf.metrics.mean of each batch's loss (estimator.py,
    _evaluate_build_graph), each T2T's sum over the batch by its token count: a short batch
    weighs as much as a full one. It was the token-weighted mean (neg_log_perplexity's)."""
    import tensorflow as tf

    from t2t_repro.training.loop import evaluation

    batches = [(40.0, 20.0), (3.0, 1.0)]  # (cross-entropy sum, tokens): means 2.0 and 3.0

    @tf.function
    def eval_step(i):
        xent, tokens = tf.gather([b[0] for b in batches], i), tf.gather([b[1] for b in batches], i)
        zero = tf.constant(0.0)
        sums = {"correct": zero, "sequences": zero + 1, "correct_sequences": zero}
        return {"xent": xent, "tokens": tokens, **sums}

    metrics = evaluation.evaluate(eval_step, tf.data.Dataset.range(2))
    assert metrics["loss"] == pytest.approx((2.0 + 3.0) / 2)
    assert metrics["neg_log_perplexity"] == pytest.approx(-43.0 / 21.0)


CASE = """
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.layers import modalities
from tensor2tensor.utils import registry


@registry.register_problem
class {cls}(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {{"inputs": "abc", "targets": "ABC"}}
{body}
"""

REFUSED = {
    "preprocess": (
        "    def preprocess(self, dataset, mode, hparams, interleave=True):\n"
        "        return dataset\n",
        "overrides preprocess, which this project does not call; remove it (override "
        "preprocess_example",
    ),
    "example_reading_spec": (
        "    def example_reading_spec(self):\n        return {'targets': 1}, {'targets': 2}\n",
        "example_reading_spec() gives data_items_to_decoders (tf.contrib.slim",
    ),
    "decode_hooks": (
        "    @property\n    def decode_hooks(self):\n        return [print]\n",
        "overrides decode_hooks, which this project does not call; remove it (score decodes",
    ),
    "eval_hooks": (
        "    def eval_hooks(self, features, logits, hparams):\n        return []\n",
        "overrides eval_hooks, which this project does not call; remove it (the trainer's",
    ),
    "eval_metrics": (
        "    def eval_metrics(self):\n        return ['accuracy', 'word_error_rate']\n",
        "eval_metrics() names word_error_rate, which this project does not compute",
    ),
    # Every name of T2T's Metrics exists (it was an AttributeError in the user's own code).
    "eval_metrics_by_t2ts_name": (
        "    def eval_metrics(self):\n"
        "        from tensor2tensor.utils.metrics import Metrics\n"
        "        return [Metrics.ACC, Metrics.SET_PRECISION, Metrics.IMAGE_RMSE]\n",
        "eval_metrics() names set_precision, image_rmse, which this project does not compute",
    ),
    "modality": (
        "    def hparams(self, defaults, model_hparams):\n"
        "        defaults.modality = {'targets': modalities.ModalityType.SIGMOID_CLASS_LABEL}\n",
        "sets modality['targets'] = 'sigmoid_class_label'",
    ),
    "returns": (
        "    def hparams(self, defaults, model_hparams):\n        return defaults\n",
        "returned a value",
    ),
    "model_hparams": (
        "    def hparams(self, defaults, model_hparams):\n        model_hparams.hidden_size = 8\n"
        "        model_hparams.add_hparam('my_new_one', 1)\n",
        "changed the model hparams hidden_size, my_new_one",
    ),
}


def _forget_inline_usr_dir():
    for name in [n for n in sys.modules if n.split(".")[0] == INLINE]:
        del sys.modules[name]
    for name in ("hook_case", "raises_case"):
        registry._REGISTRIES[registry.PROBLEMS].pop(name, None)


def _load_case(tmp_path, body):
    _forget_inline_usr_dir()
    path = tmp_path / f"{INLINE}.py"
    path.write_text(CASE.format(cls="HookCase", body=body), encoding="utf-8")
    from t2t_repro.usr_dir import import_usr_dir

    import_usr_dir(str(path))
    return path


@pytest.mark.parametrize("hook", sorted(REFUSED))
def test_a_hook_this_project_cannot_honour_is_refused_in_one_line(tmp_path, hook):
    body, message = REFUSED[hook]
    path = _load_case(tmp_path, body)
    problem = registry.problem("hook_case")
    problem.get_encoders(str(tmp_path))  # datagen needs none of these hooks: not refused
    model_hparams = model_hparams_for_problem("transformer_tiny", data_dir=str(tmp_path))
    with pytest.raises(T2TProblemError) as refused:
        problem.problem_hparams(str(tmp_path), model_hparams)
    line = str(refused.value)
    assert message in line and "\n" not in line
    assert line.startswith(f"HookCase (hook_case) in {path}: ")


@pytest.mark.slow
def test_an_overridden_max_length_is_what_the_training_input_keeps(generated, tmp_path):
    """T2T's input_fn filters and buckets by problem.max_length(hparams); the trainer passes
    it to make_dataset."""
    import tensorflow as tf

    from t2t_repro.data.input_pipeline import TRAIN, make_dataset

    hook = "    def max_length(self, model_hparams):\n"
    # batch_size_means_tokens=False: T2T's input_fn batches text by tokens all the same (its
    # shapes are not fully defined), so it is accepted, and batches here are tokens too.
    examples = "    @property\n    def batch_size_means_tokens(self):\n        return False\n"
    _load_case(tmp_path, hook + "        return model_hparams.batch_size // 16\n" + examples)
    problem = registry.problem("hook_case")
    hp = create_run_hparams(problem, str(tmp_path), HPARAMS_SET)  # not refused
    assert problem.max_length(hp) == hp.batch_size // 16 == 16
    pattern = registry.problem(CHARS).filepattern(str(generated), "train")

    def lengths(max_length):
        found = []
        for batch in make_dataset(pattern, TRAIN, hp, seed=1, repeat=False, max_length=max_length):
            rows = [tf.reduce_sum(tf.cast(batch[k] > 0, tf.int32), 1) for k in batch]
            found += tf.reduce_max(tf.stack(rows), 0).numpy().tolist()
        return found

    kept, every = lengths(problem.max_length(hp)), lengths(None)  # None: batch_size, 256
    assert len(every) == 30 and max(every) > 16
    assert sorted(kept) == sorted(n for n in every if n <= 16) and kept


def test_the_trainer_refuses_an_unhonoured_hook_before_writing_anything(tmp_path, capsys):
    path = _load_case(tmp_path, REFUSED["preprocess"][0])
    (tmp_path / "data").mkdir()
    argv = [
        "--problem=hook_case",
        f"--data_dir={tmp_path / 'data'}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={path}",
        "--hparams_set=transformer_tiny",
        "--train_steps=1",
    ]
    assert trainer.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("t2t-trainer: error: HookCase (hook_case) in ")
    assert "overrides preprocess," in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "train").exists()


RAISES = CASE.format(
    cls="RaisesCase",
    body='        raise ValueError("line 2 of my corpus has no tab")\n\n'
    "    def hparams(self, defaults, model_hparams):\n"
    "        defaults.target_space_id = model_hparams.no_such_hparam\n",
)


def test_an_error_in_usr_dir_code_is_one_line_naming_file_line_and_problem(tmp_path, capsys):
    path = tmp_path / f"{INLINE}.py"
    path.write_text(RAISES, encoding="utf-8")
    lines = RAISES.splitlines()
    raise_line = next(i for i, s in enumerate(lines, 1) if "raise ValueError" in s)
    hook_line = next(i for i, s in enumerate(lines, 1) if "no_such_hparam" in s)
    _forget_inline_usr_dir()
    data = tmp_path / "data"
    common = ["--problem=raises_case", f"--data_dir={data}", f"--t2t_usr_dir={path}"]
    assert datagen.main([*common, f"--tmp_dir={tmp_path}", "--noprogress"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "t2t-datagen: error: your --t2t_usr_dir code raised ValueError: line 2 of my corpus has "
        f"no tab at {path}:{raise_line} (in generate_samples) while running problem raises_case;"
        " fix it there. Run with --verbose for the traceback."
    )
    data.mkdir(exist_ok=True)
    argv = [*common, f"--output_dir={tmp_path / 'train'}", "--hparams_set=transformer_tiny"]
    assert trainer.main([*argv, "--train_steps=1"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"raised AttributeError: HParams has no hparam 'no_such_hparam' at {path}:" in err
    assert f"{path}:{hook_line} (in hparams) while running problem raises_case" in err
    src = tmp_path / "src.txt"
    src.write_text("abc\n", encoding="utf-8")
    assert decoder.main([*argv, f"--decode_from_file={src}"]) == 1
    decoder_err = capsys.readouterr().err.strip()
    assert decoder_err == err.replace("t2t-trainer: ", "t2t-decoder: ", 1)


def test_a_usr_dir_that_does_not_import_is_one_line_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / f"{INLINE}.py"
    path.write_text("from tensor2tensor.utils import registry\n\ndef broken(:\n", "utf-8")
    _forget_inline_usr_dir()
    argv = ["--problem=x", f"--data_dir={tmp_path}", f"--t2t_usr_dir={path}"]
    assert datagen.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith(f"t2t-datagen: error: --t2t_usr_dir {path}: your --t2t_usr_dir code")
    assert err.endswith(
        f"raised SyntaxError: invalid syntax at {path}:3 (in <module>); fix it there."
    )


MULTIPROCESS = """
    @property
    def multiprocess_generate(self):
        return True

    @property
    def num_generate_tasks(self):
        return 2

    def prepare_to_generate(self, data_dir, tmp_dir):
        open(data_dir + "/prepared", "w").close()

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        open(data_dir + "/task_" + str(task_id), "w").close()
"""


def test_datagen_calls_generate_data_as_t2t_datagen(tmp_path):
    """bin/t2t_datagen.py: task_id None; with multiprocess_generate, prepare_to_generate
    once, then each task id. bin/t2t_trainer.py's --generate_data: generate_data(data_dir,
    tmp_dir), the method's own default. And T2T's filepattern and data_filepaths."""
    _load_case(tmp_path, MULTIPROCESS)
    problem = registry.problem("hook_case")
    data = tmp_path / "data"
    problem.generate_data(str(data), str(tmp_path), None)  # as t2t-datagen calls it
    assert sorted(p.name for p in data.iterdir()) == ["prepared", "task_0", "task_1"]
    problem.generate_data(str(tmp_path / "trainer"), str(tmp_path))  # as t2t-trainer does
    assert [p.name for p in (tmp_path / "trainer").iterdir()] == ["task_-1"]
    _load_case(tmp_path, MULTIPROCESS.replace("return True", "return False"))
    single = registry.problem("hook_case")
    single.generate_data(str(tmp_path / "single"), str(tmp_path), None)
    assert [p.name for p in (tmp_path / "single").iterdir()] == ["task_None"]
    d = str(tmp_path)
    assert single.filepattern(d, "train") == f"{d}/hook_case-train*"
    assert single.filepattern(d, "infer", shard=3) == f"{d}/hook_case-dev-00003*"
    assert single.data_filepaths("eval", d, 2, True) == single.dev_filepaths(d, 2, True)
    assert single.task_id == -1 and not single.was_reversed


RANDOM_DRAW = """
    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        import random
        open(data_dir + "/draw", "w").write(repr(random.random()))
"""


def test_the_trainers_generate_data_draws_from_the_trainers_seed_as_t2ts(tmp_path):
    """bin/t2t_trainer.py seeds with --random_seed, then calls generate_data: no other seed
    (it was t2t-datagen's 429459 here); t2t-datagen seeds with its own --random_seed."""
    _load_case(tmp_path, RANDOM_DRAW)
    problem = registry.problem("hook_case")
    random.seed(5)  # what the trainer's --random_seed=5 did before
    problem.generate_data(str(tmp_path / "trainer"), str(tmp_path))  # t2t-trainer's call
    assert float((tmp_path / "trainer" / "draw").read_text()) == random.Random(5).random()
    problem.generate_data(str(tmp_path / "datagen"), str(tmp_path), None)  # t2t-datagen's
    assert float((tmp_path / "datagen" / "draw").read_text()) == random.Random(429459).random()
