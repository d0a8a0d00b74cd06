"""T2T's ``HParams`` calls a usr_dir makes behave as in T2T 1.15.7's ``utils/hparam.py`` (each
case below gave another result here before, found by running the same calls in T2T's venv)."""

import numpy as np
import pytest

from t2t_repro import registry
from t2t_repro.hparam import HParams, HParamsError


def test_an_unknown_name_is_a_key_error_as_t2ts():
    """T2T's set_hparam raises KeyError for a name it lacks: the usual fallback works."""
    hp = HParams(a=1)
    try:
        hp.set_hparam("zz", 2)
    except KeyError:
        hp.add_hparam("zz", 2)
    assert hp.zz == 2
    with pytest.raises(KeyError) as e:
        hp.override_from_dict({"yy": 1})
    assert str(e.value).startswith("Unknown hparam 'yy'")  # the message, not KeyError's repr
    with pytest.raises(HParamsError):  # and still one of this project's user errors
        hp.set_hparam("yy", 1)


def test_numpy_scalars_are_numbers_as_t2ts():
    hp = HParams(f=0.5, a=1, lf=[1.0, 2.0], li=[1, 2])
    hp.set_hparam("f", np.float32(0.25))
    hp.set_hparam("a", np.int64(7))
    assert (hp.f, type(hp.f), hp.a, type(hp.a)) == (0.25, float, 7, int)
    hp.set_hparam("f", np.int64(3))
    assert hp.f == 3.0 and type(hp.f) is float
    hp.add_hparam("g", np.float64(1.5))
    assert type(hp.g) is float
    hp.set_hparam("lf", [3, 4])  # T2T casts a float list's items
    assert hp.lf == [3.0, 4.0] and all(type(v) is float for v in hp.lf)
    with pytest.raises(HParamsError, match="list of ints"):
        hp.set_hparam("li", [3.5])


def test_json_calls_and_del_are_t2ts():
    hp = HParams(z=1, a=2)
    assert hp.to_json(indent=0, sort_keys=True) == '{\n"a": 2,\n"z": 1\n}'  # t2t_trainer.py's
    assert hp.to_json(indent=None, separators=(",", ":"), sort_keys=False) == '{"z":1,"a":2}'
    assert hp.parse_json('{"a": 5}') is hp and hp.a == 5
    hp.del_hparam("not_there")  # a no-op in T2T
    hp.del_hparam("z")
    assert "z" not in hp


def test_get_reads_t2ts_names_kept_beside_the_hparams():
    """T2T's transformer_base has moe_k (2): get() read None here, and after set_hparam too."""
    hp = registry.hparams("transformer_base")
    assert hp.get("moe_k") == 2 and hp.get("daisy_chain_variables") is True
    hp.set_hparam("moe_k", 4)
    assert hp.get("moe_k") == 4 == hp.moe_k
    assert hp.get("no_such_name", "fallback") == "fallback"


def test_t2ts_registry_helpers_and_checks():
    """T2T's registry functions a usr_dir may call (they were refused), and its checks."""
    from t2t_repro.t2t_compat import aliases

    aliases.install()
    import tensor2tensor.utils.registry as t2t_registry

    spec = t2t_registry.parse_problem_name("foo_copy_rev")
    assert tuple(spec) == ("foo", True, True) and spec.base_name == "foo"
    assert t2t_registry.get_problem_name("foo", was_reversed=True, was_copy=True) == "foo_copy_rev"
    with pytest.raises(ValueError, match="multiple '_rev'"):
        t2t_registry.parse_problem_name("foo_rev_rev")
    listing = t2t_registry.display_list_by_prefix(["b_z", "a_y", "a_x"], 2)
    assert listing == "  a:\n    * a_x\n    * a_y\n  b:\n    * b_z"
    with pytest.raises(ValueError, match="must be callable"):
        t2t_registry.register_hparams("api_not_callable")(5)
    assert issubclass(t2t_registry.RangedHParamsError, ValueError)
