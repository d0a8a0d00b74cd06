"""Registry lookups, HParams overrides and their error messages."""

import pytest

from t2t_repro import registry
from t2t_repro.errors import UserError
from t2t_repro.hparam import HParams, HParamsError, join_overrides
from t2t_repro.hparams_lib.build import create_hparams


def test_snake_case_naming():
    assert registry.camelcase_to_snakecase("TranslateEndeWmt32k") == "translate_ende_wmt32k"


def test_unknown_hparams_set_lists_nearest():
    with pytest.raises(registry.RegistryError) as e:
        registry.hparams("transformer_bigg")
    assert "transformer_big" in str(e.value) and "--registry_help" in str(e.value)


def test_an_hparams_function_returning_none_raises_t2ts_type_error_in_one_line():
    from t2t_repro.t2t_compat import registry as t2t_registry
    from tests.usr_dir_registry import restored_registry

    restore = restored_registry(set())
    next(restore)
    try:

        @t2t_registry.register_hparams
        def forgot_its_return():
            registry.hparams("transformer_tiny").set_hparam("hidden_size", 64)

        assert t2t_registry.hparams("transformer_tiny") == registry.hparams("transformer_tiny")
        for lookup in (registry.hparams, t2t_registry.hparams):
            with pytest.raises(TypeError) as e:
                lookup("forgot_its_return")
            assert isinstance(e.value, UserError)  # one line, no traceback
            assert str(e.value) == (
                "HParams forgot_its_return is None. Make sure the registered function returns "
                "the HParams object."
            )
    finally:
        next(restore, None)


def test_unknown_problem_is_clear():
    with pytest.raises(registry.RegistryError, match="Unknown problem 'no_such_problem'"):
        registry.problem("no_such_problem")


def test_registry_help_lists_all_table3_rows():
    rows = [line for line in registry.help_string().splitlines() if "table3" in line]
    assert len(rows) == 18


def test_bad_value_names_hparam_and_type():
    with pytest.raises(HParamsError, match="'num_heads' takes a value of type int; got 'eight'"):
        create_hparams("transformer_base", "num_heads=eight")


def test_unknown_hparam_suggests():
    with pytest.raises(HParamsError, match="Unknown hparam 'hiden_size'.*hidden_size"):
        create_hparams("transformer_base", "hiden_size=8")


def test_malformed_override():
    with pytest.raises(HParamsError, match="expected name=value"):
        create_hparams("transformer_base", "hidden_size")


def test_a_bool_takes_true_false_or_an_integer_as_t2ts_parse_bool():
    hp = create_hparams("transformer_base")
    for text, value in (("True", True), ("false", False), ("0", False), ("2", True), ("-1", True)):
        assert hp.parse(f"use_pad_remover={text}").use_pad_remover is value, text
    for refused in ("maybe", "yes", "no", "TRUE"):  # T2T's parse_bool takes none of them
        with pytest.raises(HParamsError, match="'use_pad_remover' takes a value of type bool"):
            hp.parse(f"use_pad_remover={refused}")


def test_a_list_takes_its_own_element_type_as_t2ts_parse():
    """T2T's HParams.parse casts each item to the list's element type: [1,2] is floats for a
    float list, [1.5,2] refused for an int list (both were taken as given)."""
    hp = HParams(floats=[0.5, 1.0], ints=[1000, 2000])
    assert hp.parse("floats=[1,2]").floats == [1.0, 2.0]
    assert all(isinstance(x, float) for x in hp.floats)
    assert hp.parse("ints=[3,4]").ints == [3, 4]
    with pytest.raises(HParamsError, match="'ints' takes a list of ints"):
        hp.parse("ints=[1.5,2]")


def test_a_name_given_twice_is_refused_as_t2ts_parse_refuses_it():
    """T2T's HParams.parse raises "Multiple assignments" rather than keep either value."""
    with pytest.raises(HParamsError, match="'hidden_size' is given twice in .*give it once"):
        create_hparams("transformer_base", "hidden_size=256,num_heads=4, hidden_size =512")
    with pytest.raises(HParamsError, match="'moe_k' is given twice"):  # T2T-only
        create_hparams("transformer_base", "moe_k=1,moe_k=1")
    assert create_hparams("transformer_base", "hidden_size=256").hidden_size == 256
    hp = create_hparams("transformer_base")
    for refused in ("hidden_size=256,hidden_size=512", "hidden_size=256,num_heads=eight"):
        with pytest.raises(HParamsError):  # read whole before anything is set, as T2T's
            hp.parse(refused)
        assert hp == create_hparams("transformer_base"), refused


def test_join_overrides_lets_a_later_string_win_and_keeps_a_users_repeat():
    joined = join_overrides("use_xla=True", "use_xla=False,beam_size=2")
    assert joined == "use_xla=False,beam_size=2"
    assert join_overrides("a=[1,2],b=1", "", "b=2", "c=3") == "a=[1,2],b=2,c=3"
    assert join_overrides("", "b=1,b=2") == "b=1,b=2"  # for parse to refuse


def test_overrides_are_typed_and_json_round_trips():
    hp = create_hparams(
        "transformer_base", "hidden_size=256, label_smoothing=0,pos=emb", input_vocab_size=100
    )
    assert hp.hidden_size == 256 and hp.label_smoothing == 0.0 and hp.pos == "emb"
    assert isinstance(hp.label_smoothing, float)
    again = HParams.from_json(hp.to_json())
    assert again == hp and again.diff(hp) == {}


def test_saved_json_overrides_set_then_flags_override_json():
    saved = create_hparams("transformer_base", "hidden_size=128").to_json()
    hp = create_hparams("transformer_base", "num_heads=4", saved_json=saved)
    assert hp.hidden_size == 128 and hp.num_heads == 4


def test_paper_sets():
    base, big, enfr = (
        registry.hparams(n)
        for n in ("transformer_base_v1", "transformer_big_v1", "transformer_big_enfr_v1")
    )
    assert (base.layer_preprocess_sequence, base.layer_postprocess_sequence) == ("none", "dan")
    assert (base.attention_dropout, base.relu_dropout) == (0.0, 0.0)
    assert (base.optimizer_adam_beta2, base.learning_rate_warmup_steps) == (0.98, 4000)
    assert (big.hidden_size, big.filter_size, big.num_heads) == (1024, 4096, 16)
    assert big.layer_prepostprocess_dropout == 0.3 and enfr.layer_prepostprocess_dropout == 0.1


def test_parsing_recipe_sets_are_the_recipes_former_override_strings():
    """The parsing recipe's model, once a string in the recipe script, is a registered set with
    exactly the same values, so runs of the set reproduce the recorded ones (#28)."""
    hour = "layer_prepostprocess_dropout=0.3,attention_dropout=0.2"
    words = hour + ",slot_signal=True,slot_source_feed=True,word_dropout_alpha=2"
    for name, overrides in (
        ("transformer_parsing_cpu_hour", hour),
        ("transformer_parsing_cpu_words", words),
    ):
        registered = create_hparams(name)
        assert registered == create_hparams("transformer_parsing_cpu", overrides), name
        assert registered != create_hparams("transformer_parsing_cpu"), name
