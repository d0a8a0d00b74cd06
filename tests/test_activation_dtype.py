"""T2T's hparam activation_dtype=bfloat16 (utils/t2t_model.py, T2TModel.call: bfloat16
activations over float32 variables, in training and in decoding) runs under Keras's mixed
bfloat16 policy here; weight_dtype=bfloat16 is refused in one line (float16 activations:
tests/test_float16_activations.py)."""

import keras
import pytest

from t2t_repro.decoding import runner
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib import checks
from t2t_repro.training.config import TrainerConfig
from t2t_repro.training.run_setup import TrainingError, setup_precision
from tests.model_utils import build_model, shared_toy_checkpoint, toy_checkpoint_dir


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    keras.mixed_precision.set_global_policy("float32")


@pytest.fixture(scope="module")
def bf16_checkpoint(tmp_path_factory):
    """A toy checkpoint trained (saved) with bfloat16 activations, made once for the module:
    its tests only read it."""
    return toy_checkpoint_dir(
        tmp_path_factory.mktemp("bf16"), overrides="max_length=12,activation_dtype=bfloat16"
    )


def config(**flags) -> TrainerConfig:
    return TrainerConfig("translate_toy", "transformer_tiny", "d", "o", **flags)


def test_training_takes_its_precision_from_the_hparam():
    cfg = setup_precision(config(), HParams(activation_dtype="bfloat16"))
    assert cfg.mixed_precision == "bfloat16"
    assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
    flag = setup_precision(config(mixed_precision="bfloat16"), HParams())
    assert flag.mixed_precision == "bfloat16"  # the flag alone, as before
    with pytest.raises(TrainingError, match="ask for two precisions"):
        setup_precision(config(mixed_precision="float16"), HParams(activation_dtype="bfloat16"))


def test_the_hparam_gpu_automatic_mixed_precision_is_float16_as_t2ts_optimize_reads_it():
    """T2T's optimize.py reads the hparam (its trainer flag only sets it): float16 here too,
    as --gpu_automatic_mixed_precision; it was taken and did nothing."""
    hp = HParams().parse("gpu_automatic_mixed_precision=true")
    assert setup_precision(config(), hp).mixed_precision == "float16"
    assert keras.mixed_precision.global_policy().name == "mixed_float16"
    assert setup_precision(config(), HParams()).mixed_precision == ""
    with pytest.raises(TrainingError, match="contradicts the run's bfloat16"):
        setup_precision(config(mixed_precision="bfloat16"), hp)


def test_training_refuses_t2t_training_switches_not_implemented_here():
    """mlperf_mode and warm_start_from_second change T2T's training (trainer_lib.py,
    t2t_model.py); they were taken and did nothing: refused in one line when training, kept
    for anything else (t2t-import of a T2T run's hparams.json)."""
    hp = build_model("transformer_tiny", "hidden_size=16,num_heads=2", vocab_size=20).hparams
    for override in ("mlperf_mode=true", "warm_start_from_second=/ckpt"):
        checks.validate(hp.copy().parse(override))
        with pytest.raises(HParamsError, match="not implemented here") as refused:
            checks.validate(hp.copy().parse(override), training=True)
        assert "\n" not in str(refused.value)


def test_other_reduced_precisions_are_refused_in_one_line():
    hp = build_model("transformer_tiny", "hidden_size=16,num_heads=2", vocab_size=20).hparams
    checks.validate(hp.copy().parse("activation_dtype=bfloat16"), training=True)
    for override, message in (
        ("activation_dtype=float64", "T2T 1.15 has no other activation type"),
        ("weight_dtype=bfloat16", "only weight_dtype='float32', T2T's default"),
    ):
        with pytest.raises(HParamsError, match=message) as refused:
            checks.validate(hp.copy().parse(override), training=True)
        assert "\n" not in str(refused.value)


def test_a_model_trained_with_bfloat16_activations_decodes_in_bfloat16(bf16_checkpoint, capsys):
    root = bf16_checkpoint
    keras.mixed_precision.set_global_policy("float32")
    setup = runner.load_decoder(
        "translate_toy",
        "",
        "",
        str(root / "data"),
        str(root / "train"),
        decode_overrides="beam_size=1",
    )
    assert setup.dhp.precision == "bfloat16"
    assert "note: decoding in bfloat16, as T2T decodes" in capsys.readouterr().err
    assert setup.model.compute_dtype == "bfloat16"
    assert keras.mixed_precision.global_policy().name == "float32"  # restored after loading
    assert len(setup.decoder.decode_lines(["a b c"])) == 1


def test_an_ensemble_of_both_precisions_asks_which(bf16_checkpoint):
    from t2t_repro.decoding.ensemble import EnsembleError

    # The run's float32 toy checkpoint (the defaults: step 7, as bf16_checkpoint's)
    bf16, fp32 = bf16_checkpoint, shared_toy_checkpoint()
    members = f"{bf16 / 'train' / 'ckpt-7'},{fp32 / 'train' / 'ckpt-7'}"
    load = dict(checkpoint_path=members, allow_ensemble=True)
    with pytest.raises(EnsembleError, match="give --decode_hparams=precision=float32"):
        runner.load_decoder("translate_toy", "", "", str(bf16 / "data"), "", **load)
    setup = runner.load_decoder(
        "translate_toy",
        "",
        "",
        str(bf16 / "data"),
        "",
        decode_overrides="precision=float32",
        **load,
    )
    assert setup.dhp.precision == "float32"
