"""A usr_dir's transformer set built as T2T's own ``transformer_base_v1`` is: from
``basic_params1``, adding the transformer's names, and assigning ``num_sampled_classes``, a
name ``basic_params1`` lacks (google-research's CFQ usr_dir does both). T2T's ``HParams`` keeps
such a name as a plain attribute, not a hyperparameter: T2T 1.15.7's own
``transformer_base_v1().values()`` (tests/data/t2t_reference) has no ``num_sampled_classes``
although the function assigns it. The model runs on such a set, which lacks the project's own
names (``slot_signal``, ``target_space_vocab_size``)."""

import json
from pathlib import Path

import pytest
import tensorflow as tf

from t2t_repro import hparam, registry
from t2t_repro.hparam import HParamsError
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.usr_dir import import_usr_dir
from tests.model_utils import build_model
from tests.usr_dir_registry import restored_registry

DATA = Path(__file__).parent / "data"
USR_DIR = DATA / "t2t_usr_dir_basic_set"
T2T_SETS = json.loads((DATA / "t2t_reference" / "t2t_1.15.7_hparams.json").read_text())["sets"]
SET = "basic_built_transformer"


@pytest.fixture
def usr_set(monkeypatch):
    monkeypatch.setattr(hparam, "_ATTRIBUTES_SAID", set())
    gen = restored_registry({USR_DIR.name})
    next(gen)
    import_usr_dir(str(USR_DIR))
    yield SET
    next(gen, None)


def test_t2ts_own_set_assigns_a_name_that_is_not_a_hyperparameter():
    assert T2T_SETS["transformer_base_v1"]["hidden_size"] == 512  # the set is recorded
    assert "num_sampled_classes" not in T2T_SETS["transformer_base_v1"]


def test_an_assigned_unknown_name_is_a_plain_attribute_as_in_t2t(usr_set, capsys):
    hp = registry.hparams(usr_set)
    assert hp.num_sampled_classes == 0
    assert "num_sampled_classes" not in hp.values()
    assert "num_sampled_classes" not in json.loads(hp.to_json())
    assert "num_sampled_classes" not in hp
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "hparams.num_sampled_classes = 0: not a hyperparameter of this set; kept as a plain "
        "attribute, as T2T's HParams keeps it (nothing reads it)."
    ]
    registry.hparams(usr_set)
    assert capsys.readouterr().err == ""  # said once per process
    assert hp.copy().num_sampled_classes == 0
    # Not a hyperparameter: --hparams cannot set it, and add_hparam refuses it (T2T: "reserved")
    with pytest.raises(HParamsError, match="Unknown hparam 'num_sampled_classes'"):
        create_hparams(usr_set, "num_sampled_classes=1")
    with pytest.raises(HParamsError, match="'num_sampled_classes' is reserved"):
        hp.add_hparam("num_sampled_classes", 1)
    # Names that are hparams keep their checks when assigned
    with pytest.raises(HParamsError, match="'hidden_size' has type int"):
        hp.hidden_size = "wide"
    hp.hiden_size = 8  # a typo is T2T's plain attribute too, and the line names the hparam
    assert "hiden_size" not in hp and hp.hidden_size == 64
    assert "(did you mean hidden_size?)" in capsys.readouterr().err


def test_the_model_runs_on_a_set_without_the_projects_own_names(usr_set):
    hp = registry.hparams(usr_set)
    assert "slot_signal" not in hp and "target_space_vocab_size" not in hp
    model = build_model(usr_set, vocab_size=20)
    logits = model({"inputs": tf.constant([[3, 4, 1]]), "targets": tf.constant([[5, 6, 1]])})
    assert logits.shape == (1, 3, 20)
    assert model.target_space_embedding.shape == (32, 64)  # T2T's 32 rows


def test_a_set_for_another_t2t_model_is_refused_in_one_line(usr_set):
    from t2t_repro.builtin.hparams.basic import basic_params1
    from t2t_repro.hparams_lib import checks

    hp = basic_params1()  # as CFQ's cfq_lstm_attention_multi, an LSTM's set
    hp.add_hparam("attention_layer_size", 128)
    with pytest.raises(HParamsError) as e:
        checks.check_transformer_names(hp, "--hparams_set=cfq_lstm_attention_multi")
    assert str(e.value).startswith(
        "--hparams_set=cfq_lstm_attention_multi lacks the transformer's filter_size, num_heads, "
    )
    assert "\n" not in str(e.value)
    checks.check_transformer_names(registry.hparams(usr_set))  # the basic-built one has them
    checks.validate(registry.hparams(usr_set), training=True)
