"""T2T's ``prepend_mode``: the inputs and a 0 prepended to the targets (``data/input_pipeline.py``,
``preprocess_common``).

tests/data/t2t_reference/t2t_1.15.7_prepend_mode.json is T2T 1.15.7's own
``preprocess_example_common`` on crafted examples in each mode (made by
tools/t2t_reference/make_t2t_prepend_reference.py); T2T's sets that set it are checked with
the others (tests/test_t2t_sets.py)."""

import json

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.data.input_pipeline import EVAL, make_dataset, parse_and_truncate, preprocess_common
from t2t_repro.decoding.runner import check_not_prepended
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
    with pytest.raises(UserError, match="every decode .from a file, interactive, a split, an") as e:
        check_not_prepended(hp)  # every decode and export (runner.load_decoder), the schedules
    assert "\n" not in str(e.value)
    full = create_hparams("transformer_tiny", "prepend_mode=prepend_inputs_full_attention")
    with pytest.raises(UserError, match="full_attention.*not implemented here") as e:
        validate(full)
    assert "\n" not in str(e.value)
    from t2t_repro.training.loop.dev_decodes import make_dev_decodes

    problem = registry.problem("translate_toy")
    assert make_dev_decodes(None, problem, str(shared_toy_data()), hp, 4) is None
    assert "no dev decodes: with prepend_mode" in capsys.readouterr().out


def test_a_decoder_of_such_a_model_is_refused_before_decoding():
    """T2T decodes every input of such a model to nothing: t2t-decoder (and the exporter,
    which loads the same way) refuses the model in one line."""
    from t2t_repro.decoding import runner
    from tests.model_utils import shared_toy_checkpoint

    root = shared_toy_checkpoint()
    with pytest.raises(UserError, match="this project does not decode or export it"):
        runner.load_decoder(
            "translate_toy", "", MASKED, str(root / "data"), str(root / "train"), "", "beam_size=1"
        )


def test_the_eval_loss_counts_the_targets_after_the_inputs_and_the_metrics_all():
    """T2T's eval of the masked mode: ``loss`` over the targets after the first 0 (its
    ``weights_prepend_inputs_to_targets``), accuracy and perplexity over every non-0 id."""
    from t2t_repro.training.loop.evaluation import evaluate, make_eval_fn
    from tests.model_utils import build_model
    from tests.tools import NO_DROPOUT, PLUMBING_MODEL

    tf.keras.utils.set_random_seed(7)
    model = build_model("transformer_tiny", f"{PLUMBING_MODEL},{NO_DROPOUT},{MASKED}", 20)
    targets = np.array([[3, 4, 1, 0, 6, 7, 1], [5, 1, 0, 8, 1, 0, 0]], np.int32)
    batch = {"inputs": tf.constant([[3, 4, 1], [5, 1, 0]]), "targets": tf.constant(targets)}
    strategy = tf.distribute.get_strategy()
    got = evaluate(make_eval_fn(strategy, model), tf.data.Dataset.from_tensors(batch))
    logits = model(batch, training=False).numpy().astype(np.float64)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    xent = -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]
    after_zero = (np.cumsum(targets == 0, axis=1) > 0) & (targets != 0)
    rtol = 1e-5  # float32 logits against their float64 softmax here
    np.testing.assert_allclose(got["loss"], xent[after_zero].mean(), rtol=rtol)
    np.testing.assert_allclose(-got["neg_log_perplexity"], xent[targets != 0].mean(), rtol=rtol)
    assert after_zero.sum() == 5 and (targets != 0).sum() == 10


def test_a_decode_schedule_is_refused_before_any_file():
    """The set's or --hparams' prepend_mode, before --generate_data would write (the saved
    hparams.json's is checked when the run's hparams are read)."""
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.run_setup import check_config

    for schedule in ("train_eval_and_decode", "decode"):
        config = TrainerConfig("translate_toy", "transformer_prepend", "d", "o", schedule=schedule)
        with pytest.raises(UserError, match="this project does not decode or export it"):
            check_config(config)
    check_config(TrainerConfig("translate_toy", "transformer_prepend", "d", "o"))  # trains
