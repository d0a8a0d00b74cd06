"""Every hparams set T2T 1.15's ``models/transformer.py`` registers is either registered here with
T2T's values or, asked for by name, refused in one line that says what it needs (#54).

The reference is T2T 1.15.7's own ``HParams.values()`` of each set
(tools/t2t_reference/make_t2t_hparams_reference.py: ``t2t_1.15.7_transformer_sets.json`` holds
each set's difference from ``transformer_base``)."""

import json
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.t2t_compat import transformer as t2t_transformer
from t2t_repro.t2t_compat.refusals import T2TApiError, t2t_sets_not_provided
from tests.test_t2t_hparams import REFERENCE, assert_is_t2ts

T2T_SETS = json.loads(
    (
        Path(__file__).parent / "data" / "t2t_reference" / "t2t_1.15.7_transformer_sets.json"
    ).read_text()
)


def t2t_values(name: str) -> dict:
    diff = dict(T2T_SETS[name])
    missing = diff.pop("-", [])
    base = REFERENCE["sets"]["transformer_base"]
    return {k: v for k, v in {**base, **diff}.items() if k not in missing}


def test_every_t2t_transformer_set_is_registered_or_named_as_not_provided():
    registered = set(registry.list_names(registry.HPARAMS))
    not_provided = t2t_sets_not_provided()
    assert len(T2T_SETS) == 95  # what T2T 1.15.7's models/transformer.py registers
    assert set(not_provided) <= set(T2T_SETS)
    assert not set(not_provided) & registered
    assert sorted(set(T2T_SETS) - registered - set(not_provided)) == []
    # the one-knob variants (#54) are among the registered ones
    for name in ("transformer_l2", "transformer_h4", "transformer_hs256", "transformer_big_dr1"):
        assert name in registered


def test_registered_t2t_sets_have_t2t_values():
    registered = [n for n in T2T_SETS if n in registry.list_names(registry.HPARAMS)]
    assert len(registered) >= 56  # 43 before #53, and its 13 TPU sets
    assert {"transformer_tpu", "transformer_tiny_tpu", "transformer_lm_tpu_1"} <= set(registered)
    for name in registered:
        assert_is_t2ts(registry.hparams(name), t2t_values(name), name)


def test_a_t2t_set_not_provided_is_named_in_one_line():
    with pytest.raises(registry.RegistryError) as e:
        create_hparams("transformer_mlperf_tpu")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("hparams 'transformer_mlperf_tpu' is T2T 1.15's, not provided here")
    assert "mlperf_mode" in message and "--hparams_set=transformer_base" in message
    # a name neither registry has is still an unknown name with the nearest ones
    with pytest.raises(registry.RegistryError, match="Unknown hparams 'transformer_l3'"):
        create_hparams("transformer_l3")


def test_a_usr_dir_calls_t2ts_variant_sets_by_their_module_names():
    hp = t2t_transformer.transformer_big_dr2()
    assert (hp.hidden_size, hp.layer_prepostprocess_dropout) == (1024, 0.2)
    assert hp == registry.hparams("transformer_big_dr2")
    # T2T's TPU sets (#53), and the function that makes them, for a usr_dir's own
    hp = t2t_transformer.update_hparams_for_tpu(t2t_transformer.transformer_tiny())
    assert hp == t2t_transformer.transformer_tiny_tpu() == registry.hparams("transformer_tiny_tpu")
    assert (hp.optimizer, hp.attention_dropout_broadcast_dims) == ("Adafactor", "0,1")
    # bfloat16 activations are T2T's activation_dtype (tests/test_activation_dtype.py) ...
    hp = t2t_transformer.transformer_tpu_bf16_activation()
    assert hp.activation_dtype == "bfloat16" and hp.optimizer == "Adafactor"
    # ... bfloat16 weights are not
    with pytest.raises(T2TApiError, match="transformer_tpu_1b is not provided.*") as e:
        t2t_transformer.transformer_tpu_1b()
    assert "\n" not in str(e.value) and "weight_dtype" in str(e.value)
