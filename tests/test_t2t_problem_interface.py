"""T2T 1.15's Problem interface as a usr_dir reads it (found by an audit): a language model
whose reading spec is T2T's (targets only) or whose preprocess_example gives no inputs is read
as the project's language models are; a plain Problem's has_inputs and default encoders are
T2T's; problem.default_model_hparams and FeatureInfo, feature_info and
tpu_batch_size_per_shard exist; a registered class's name is its registered name, a model's
REGISTERED_NAME too; an unknown registered name is a KeyError, as T2T's registry raises it.
And a problem's own generate_data calling Text2TextProblem's (super()) is seeded once, as T2T
seeds once per problem (the audit found it seeded again with 429459)."""

import json
import random
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from t2t_repro import registry
from t2t_repro.data import records, t2t_shards
from t2t_repro.data.input_pipeline import EVAL, make_dataset
from t2t_repro.data.text_files import DataError
from t2t_repro.hparams_lib.build import model_hparams_for_problem
from t2t_repro.t2t_compat.problem import T2TProblemError
from tests.usr_dir_registry import restored_registry

USR = "problem_interface_usr_dir"
SOURCE = """
import random

import tensorflow as tf
from tensor2tensor.data_generators import problem, text_encoder, text_problems
from tensor2tensor.utils import registry

WORDS = ["abc", "bcde", "cd", "defgh"] * 10


class _Chars(text_problems.Text2TextProblem):
    vocab_type = text_problems.VocabType.CHARACTER
    is_generate_per_split = False

    @property
    def dataset_splits(self):
        return [{"split": problem.DatasetSplit.TRAIN, "shards": 1},
                {"split": problem.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for word in WORDS:
            yield {"inputs": word, "targets": word[::-1]}


class _CharsLm(_Chars):
    has_inputs = False

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for word in WORDS:
            yield {"targets": word}


@registry.register_problem
class SelfSpecLm(_CharsLm):
    def example_reading_spec(self):  # T2T's own spec of a language model
        return {"targets": tf.VarLenFeature(tf.int64)}, None


@registry.register_problem
class DroppedInputsLm(_CharsLm):
    def preprocess_example(self, example, mode, hparams):
        example = super().preprocess_example(example, mode, hparams)
        example.pop("inputs", None)
        return example


@registry.register_problem
class DroppedInputsPairs(_Chars):
    def preprocess_example(self, example, mode, hparams):
        example.pop("inputs")
        return example


@registry.register_problem
class TargetsOnly(problem.Problem):
    def feature_encoders(self, data_dir):
        return {"targets": text_encoder.ByteTextEncoder()}


@registry.register_problem
class DefaultEncoders(problem.Problem):
    name = "not_its_name"

    def hparams(self, defaults, model_hparams):
        defaults.modality = {"inputs": "symbol", "targets": "symbol"}
        defaults.vocab_size = {"inputs": 9, "targets": 7}
        defaults.input_space_id = 3


@registry.register_problem
class BareProblem(problem.Problem):
    pass


@registry.register_model
class ListenAttendSpell(object):
    pass


@registry.register_problem
class PlainOne(_Chars):
    pass


@registry.register_problem
class OverOne(_Chars):
    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        super(OverOne, self).generate_data(data_dir, tmp_dir, task_id)


@registry.register_problem
class DrawsFirst(_Chars):
    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        random.random()
        super(DrawsFirst, self).generate_data(data_dir, tmp_dir, task_id)
"""


@pytest.fixture(scope="module", autouse=True)
def usr_dir(tmp_path_factory):
    """The usr_dir's names are registered for this module only."""
    from t2t_repro.usr_dir import import_usr_dir

    path = tmp_path_factory.mktemp("usr") / f"{USR}.py"
    path.write_text(SOURCE, encoding="utf-8")
    restore = restored_registry({USR})
    next(restore)  # the registry before the usr_dir
    import_usr_dir(str(path))
    yield sys.modules[USR]
    next(restore, None)  # and back to it


@pytest.fixture(scope="module")
def lm_data(tmp_path_factory):
    data = tmp_path_factory.mktemp("lm")
    for name in ("self_spec_lm", "dropped_inputs_lm", "dropped_inputs_pairs"):
        registry.problem(name).generate_data(str(data), str(data), None, progress=False)
    return str(data)


def _batches(problem, data_dir, read_example):
    hp = model_hparams_for_problem("transformer_tiny", data_dir=data_dir)
    pattern = problem.filepattern(data_dir, "train")
    ds = make_dataset(pattern, EVAL, hp, read_example=read_example)
    return [{k: v.numpy().tolist() for k, v in batch.items()} for batch in ds]


@pytest.mark.parametrize("name", ["self_spec_lm", "dropped_inputs_lm"])
def test_a_language_model_without_inputs_is_read_as_the_projects_are(lm_data, name):
    """T2T's Text2TextProblem spec reads no inputs for has_inputs False (the audit found the
    pipeline refusing such a problem): its batches are those of the pipeline's own reading,
    an empty inputs beside the targets, which is how the project's language models read."""
    from t2t_repro.t2t_compat.text_problems import Text2TextProblem

    problem = registry.problem(name)
    hp = model_hparams_for_problem("transformer_tiny", data_dir=lm_data)
    read = problem.read_example_fn(EVAL, hp)
    assert read is not None
    ours, pipelines = _batches(problem, lm_data, read), _batches(problem, lm_data, None)
    assert ours == pipelines and all(row == [] for b in ours for row in b["inputs"])
    assert sum(len(b["targets"]) for b in ours) == 20  # 40 samples over train and dev
    assert set(Text2TextProblem.example_reading_spec(problem)[0]) == {"targets"}


def test_a_problem_with_inputs_that_loses_them_is_still_refused(lm_data):
    problem = registry.problem("dropped_inputs_pairs")
    assert set(problem.example_reading_spec()[0]) == {"inputs", "targets"}
    with pytest.raises(DataError, match="'inputs' as no such feature"):
        _batches(problem, lm_data, problem.read_example_fn(EVAL, None))


def test_a_plain_problems_inputs_and_default_encoders_are_t2ts(tmp_path):
    """T2T's has_inputs is "inputs" in its encoders, and its default encoders are
    TextEncoders (the audit found has_inputs always True and feature_encoders raising)."""
    from tensor2tensor.data_generators import text_encoder

    targets_only = registry.problem("targets_only")
    assert not targets_only.has_inputs
    encoders = targets_only.get_encoders(str(tmp_path))
    assert encoders["inputs"] is encoders["targets"]  # a prompt encodes as the targets
    hp = model_hparams_for_problem("transformer_tiny", data_dir=str(tmp_path))
    assert targets_only.problem_hparams(str(tmp_path), hp)["has_input"] is False
    default = registry.problem("default_encoders")
    assert default.has_inputs
    assert all(type(e) is text_encoder.TextEncoder for e in default.get_encoders("").values())
    assert default.problem_hparams(str(tmp_path), hp)["input_vocab_size"] == 9
    with pytest.raises(T2TProblemError, match="no vocab_size, T2T's TextEncoder default") as e:
        registry.problem("bare_problem").problem_hparams(str(tmp_path), hp)
    assert "\n" not in str(e.value)


def test_problem_hparams_names_and_feature_info_are_t2ts(tmp_path):
    from tensor2tensor.data_generators import problem as t2t_problem
    from tensor2tensor.utils import registry as t2t_registry

    model_hparams = t2t_problem.default_model_hparams()
    assert model_hparams.max_input_seq_length == 0 and model_hparams.prepend_mode == "none"
    assert not model_hparams.data_dir  # T2T's None: read only as a truth value
    default = t2t_registry.problem("default_encoders")
    with pytest.raises(T2TProblemError, match="call get_hparams"):
        default.feature_info  # noqa: B018
    hp = default.get_hparams(model_hparams)
    assert default.get_hparams() is hp and set(hp.vocabulary) == {"inputs", "targets"}
    info = default.feature_info
    assert isinstance(info["inputs"], t2t_problem.FeatureInfo)
    assert (info["inputs"].vocab_size, info["inputs"].space_id) == (9, 3)
    assert (info["targets"].modality, info["targets"].space_id) == ("symbol", 0)
    assert info["targets"].encoder is hp.vocabulary["targets"]
    tiny = model_hparams_for_problem("transformer_tiny", "max_length=16", data_dir=str(tmp_path))
    assert default.tpu_batch_size_per_shard(tiny) == tiny.batch_size  # a batch of examples
    lm = t2t_registry.problem("self_spec_lm")  # a Text2TextProblem's batch means tokens
    assert lm.tpu_batch_size_per_shard(tiny) == tiny.batch_size // 16


def test_registered_names_are_class_attributes_and_unknown_ones_key_errors(usr_dir):
    """T2T's _on_problem_set sets cls.name (over the class's own), _on_model_set
    REGISTERED_NAME; a lookup of a name never registered raises KeyError, which usr_dirs
    catch (here with the one-line message, unquoted)."""
    from tensor2tensor.utils import registry as t2t_registry

    cls = t2t_registry.base_problem("default_encoders")
    assert cls.name == "default_encoders" and cls().name == "default_encoders"
    assert t2t_registry.base_problem("self_spec_lm").name == "self_spec_lm"
    assert usr_dir.ListenAttendSpell.REGISTERED_NAME == "listen_attend_spell"
    for lookup in (t2t_registry.problem, t2t_registry.hparams, t2t_registry.model):
        with pytest.raises(KeyError) as e:
            lookup("no_such_name_here")
        assert str(e.value).startswith("Unknown ") and "\n" not in str(e.value)


def _train_examples(data_dir: Path, name: str) -> list[dict]:
    return records.read_examples(str(data_dir / f"{name}-train-00000-of-00001"))


def _seed(data_dir: Path, name: str) -> int | None:
    return json.loads((data_dir / f"{name}.datagen.json").read_text(encoding="utf-8"))["seed"]


def _datagen(tmp_path: Path, name: str, seed: int) -> Path:
    """As t2t-datagen calls a problem (commands/datagen.py)."""
    data = tmp_path / f"{name}_{seed}"
    registry.problem(name).generate_data(str(data), str(tmp_path), None, random_seed=seed)
    return data


def test_datagen_seeds_once_with_its_random_seed(tmp_path):
    plain = _datagen(tmp_path, "plain_one", 7)
    over = _datagen(tmp_path, "over_one", 7)
    assert _train_examples(over, "over_one") == _train_examples(plain, "plain_one")
    assert _train_examples(plain, "plain_one") != _train_examples(
        _datagen(tmp_path, "plain_one", 429459), "plain_one"
    )
    assert _seed(over, "over_one") == _seed(plain, "plain_one") == 7


def test_what_the_problem_drew_first_is_not_undone(tmp_path):
    """T2T's generator goes on after the problem's own draw: the shuffle is the one a run
    seeded with 7 makes after one draw."""
    draws = _datagen(tmp_path, "draws_first", 7)
    ours = _train_examples(draws, "draws_first")
    assert ours != _train_examples(_datagen(tmp_path, "plain_one", 7), "plain_one")
    assert _seed(draws, "draws_first") == 7
    plain = tmp_path / "plain_after_a_draw"
    t2t_shards.seed_like_t2t_datagen(7)
    random.random()
    with t2t_shards.seeded_run():  # as the tool runs a problem's own generate_data
        registry.problem("plain_one").generate_data(str(plain), str(tmp_path), None)
    assert ours == _train_examples(plain, "plain_one")


def test_the_trainers_generate_data_continues_from_the_trainers_seed(tmp_path):
    """bin/t2t_trainer.py seeds with --random_seed, then calls generate_data(data_dir,
    tmp_dir): the problem's super() call draws from that seed and records it."""
    from t2t_repro.training.run_setup import setup_seed

    plain = _datagen(tmp_path, "plain_one", 5)  # seeds (and notes) 5 as t2t-datagen does
    random.seed(5)  # what the trainer's setup_seed does with --random_seed=5, which it notes
    np.random.seed(5)
    trainer = tmp_path / "trainer"
    registry.problem("over_one").generate_data(str(trainer), str(tmp_path))  # its call
    assert _train_examples(trainer, "over_one") == _train_examples(plain, "plain_one")
    assert _seed(trainer, "over_one") == 5
    setup_seed(SimpleNamespace(random_seed=None))  # the trainer notes its seed, none here
    assert t2t_shards.tool_seed() is None


def test_the_trainers_generate_data_of_a_plain_problem_uses_the_trainers_seed(tmp_path):
    """T2T's trainer seeds with --random_seed before generate_data, which draws from it: a
    Text2TextProblem's own datagen here takes that seed (it took 429459 whatever was given);
    without one, the problem's default."""
    from t2t_repro.training.run_setup import datagen_flags

    assert datagen_flags(SimpleNamespace(random_seed=None)) == {}
    trainer = tmp_path / "trainer"
    flags = datagen_flags(SimpleNamespace(random_seed=5))
    registry.problem("plain_one").generate_data(str(trainer), str(tmp_path), **flags)
    plain = _datagen(tmp_path, "plain_one", 5)
    assert _train_examples(trainer, "plain_one") == _train_examples(plain, "plain_one")
    assert _seed(trainer, "plain_one") == 5
