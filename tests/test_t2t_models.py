"""Every model name T2T 1.15.7 registers (tests/data/t2t_1.15.7_models.json, read from T2T's
source by tools/t2t_reference/list_t2t_models.py) is named as T2T's in one line when this
project does not provide it (google-research's CFQ usr_dir trains ``lstm_seq2seq_attention``
by its own command), not as an unknown name; ``transformer`` and ``transformer_encoder``
are the project's."""

import json
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.t2t_compat.t2t_models import T2T_MODELS_NOT_PROVIDED

REFERENCE = json.loads((Path(__file__).parent / "data" / "t2t_1.15.7_models.json").read_text())


def test_the_table_is_t2ts_models_but_the_transformer():
    assert REFERENCE["tensor2tensor"] == "1.15.7"
    t2t = set(REFERENCE["models"])
    assert "transformer" in t2t and "universal_transformer" in t2t and len(t2t) == 94
    assert sorted(T2T_MODELS_NOT_PROVIDED) == sorted(t2t - {"transformer", "transformer_encoder"})


@pytest.mark.parametrize("name", ["lstm_seq2seq_attention", "universal_transformer"])
def test_a_t2t_model_not_provided_is_named_as_t2ts_in_one_line(name):
    register_builtins()
    with pytest.raises(registry.RegistryError) as e:
        registry.model(name)
    assert str(e.value) == (
        f"model {name!r} is T2T 1.15's, not provided here: this project runs its transformer "
        "(and transformer_encoder, a classifier): use --model=transformer with an hparams set."
    )
    assert registry.model("transformer") is not None
    assert registry.model("transformer_encoder") is not None
    with pytest.raises(registry.RegistryError, match="Unknown model 'lstm_seq2seq_atention'"):
        registry.model("lstm_seq2seq_atention")  # a typo is still an unknown name, with hints


def test_t2t_problems_not_provided_are_named_as_t2ts_in_one_line():
    """The same for T2T 1.15.7's 311 problem names: the ones not registered here say so (an
    unknown name's nearest suggestion was another problem's data: translate_enfr_wmt32k for
    translate_enfr_wmt32k_packed)."""
    from t2t_repro.t2t_compat.t2t_problems import T2T_PROBLEMS_NOT_PROVIDED

    register_builtins()
    t2t, ours = set(REFERENCE["problems"]), set(registry.list_names(registry.PROBLEMS))
    assert len(t2t) == 311 and "translate_ende_wmt32k" in t2t & ours
    assert sorted(T2T_PROBLEMS_NOT_PROVIDED) == sorted(t2t - ours)
    with pytest.raises(registry.RegistryError) as e:
        registry.problem("wiki_revision_packed1k")
    message = str(e.value)
    assert "\n" not in message and "is T2T 1.15's, not provided here" in message
