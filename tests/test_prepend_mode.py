"""T2T's ``prepend_mode``: the inputs and a 0 prepended to the targets (``data/input_pipeline.py``,
``preprocess_common``).

tests/data/t2t_reference/t2t_1.15.7_prepend_mode.json is T2T 1.15.7's own
``preprocess_example_common`` on crafted examples in each mode (made by
tools/t2t_reference/make_t2t_prepend_reference.py); T2T's sets that set it are checked with
the others (tests/test_t2t_sets.py)."""

import json

import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.data.input_pipeline import EVAL, make_dataset, parse_and_truncate, preprocess_common
from t2t_repro.decoding.split_decoding import check_not_prepended
from t2t_repro.errors import UserError
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.hparams_lib.checks import validate
from t2t_repro.t2t_compat.example_reading import preprocess_example_common
from tests.model_utils import shared_toy_data
from tests.t2t_fixtures import REFERENCE

CASES = json.loads((REFERENCE / "t2t_1.15.7_prepend_mode.json").read_text())
MASKED = "prepend_mode=prepend_inputs_masked_attention"


def _hparams(case: dict):
    overrides = ",".join(
        f"{name}={case[name]}"
        for name in ("prepend_mode", "max_input_seq_length", "max_target_seq_length")
    )
    return create_hparams("transformer_tiny", overrides)


@pytest.mark.parametrize("name", sorted(CASES))
def test_examples_are_t2ts(name):
    """Ours (the pipeline's reading, and T2T's function as a usr_dir calls it) against T2T's
    in training, evaluation and PREDICT ("infer") mode, truncated before and after."""
    case = CASES[name]
    hp = _hparams(case)
    for run in (
        lambda ex: preprocess_common(ex, hp, infer=case["mode"] == "infer"),
        lambda ex: preprocess_example_common(ex, case["mode"], hp),
    ):
        example = {k: tf.constant(v, tf.int64) for k, v in case["case"].items()}
        if "error" in case:  # T2T reads example["inputs"]: a KeyError there too
            with pytest.raises(KeyError, match="inputs"):
                run(example)
            continue
        got = {k: v.numpy().tolist() for k, v in run(example).items()}
        assert got == case["example"], name


def test_the_pipeline_feeds_the_prepended_targets():
    """translate_toy's dev records read with it: each row's targets are its inputs, a 0 and
    the targets the same inputs have without it, padded (batches differ: rows are longer)."""
    data = str(shared_toy_data())
    pattern = registry.problem("translate_toy").filepattern(data, "dev")

    def rows(overrides: str):
        hp = create_hparams("transformer_tiny", f"batch_size=256{overrides}")
        for batch in make_dataset(pattern, EVAL, hp, repeat=False):
            for source, target in zip(
                batch["inputs"].numpy(), batch["targets"].numpy(), strict=True
            ):
                yield tuple(source[source > 0]), target

    plain = {source: target[target > 0].tolist() for source, target in rows("")}
    prepended = list(rows(f",{MASKED}"))
    assert len(prepended) == len(plain) > 10
    for source, row in prepended:
        want = [*source, 0, *plain[source]]
        assert row.tolist() == want + [0] * (len(row) - len(want))


def test_what_t2t_cannot_run_is_refused_in_one_line(capsys):
    with pytest.raises(
        UserError, match="this problem has no inputs .T2T fails with a KeyError"
    ) as e:
        validate(create_hparams("transformer_tiny", MASKED, input_vocab_size=9, has_input=False))
    assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="packed records") as e:
        parse_and_truncate(create_hparams("transformer_tiny", MASKED), packed=True)
    assert "\n" not in str(e.value)
    # T2T decodes a dev example by forcing its inputs, their EOS, and stops there: no decodes
    hp = create_hparams("transformer_tiny", MASKED)
    with pytest.raises(UserError, match="every decode is empty; decode the split's sources") as e:
        check_not_prepended(hp)  # t2t-decoder's split decodes and the decode schedules
    assert "\n" not in str(e.value)
    assert registry.problem("translate_toy").dev_metric(str(shared_toy_data()), hp, 4) is None
    assert "no dev decodes: with prepend_mode" in capsys.readouterr().out
