"""T2T's activation_dtype=float16 (utils/t2t_model.py, _custom_getter ->
utils/quantization.py, float16_activations_var_getter: float16 activations over float32
variables) trains under Keras's mixed float16 policy with T2T's loss scaling (utils/optimize.py,
ConditionalOptimizer): TensorFlow 1.15's contrib LossScaleOptimizer and
ExponentialUpdateLossScaleManager(init_loss_scale=mixed_precision_optimizer_init_loss_scale,
incr_every_n_steps=2000, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5).

The expected states below are worked out by hand from TensorFlow 1.15's
contrib/mixed_precision/python/loss_scale_manager.py (update_loss_scale) and
loss_scale_optimizer.py (apply_gradients, _down_scale); in the state machine's test every scale
and gradient is a power of two, so unscaling is exact in float32 and the updates compare bit
for bit (the unscaling test picks a scale where it is not, on purpose). Eager,
one optimizer variable; the last test decodes an untrained toy model (~1 core-s)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib import checks
from t2t_repro.optimizers.loss_scale import T2TLossScaleOptimizer, loss_scaled
from t2t_repro.training.config import TrainerConfig
from t2t_repro.training.run_setup import TrainingError, setup_precision

INF = float("inf")


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    keras.mixed_precision.set_global_policy("float32")


def sgd_scaler(initial_scale, **kwargs):
    """T2TLossScaleOptimizer over SGD(1) on one float32 weight of 0, built."""
    weight = keras.Variable(np.zeros(1, np.float32))
    opt = T2TLossScaleOptimizer(keras.optimizers.SGD(1.0), initial_scale, **kwargs)
    opt.build([weight])
    return opt, weight


def state(opt):
    return (
        float(opt.dynamic_scale.numpy()),
        int(opt.step_counter.numpy()),
        int(opt.bad_steps.numpy()),
    )


def test_the_loss_scale_follows_tf_1_15s_exponential_update_manager():
    """incr_every_n_steps=3 to see the rise; T2T's decr_every_n_nan_or_inf=2 and ratios."""
    opt, weight = sgd_scaler(4.0, incr_every_n_steps=3)
    # (gradient of the loss times the scale in force, or inf: an overflowed step), then
    # (scale, good steps, bad steps) after it
    steps = [
        (8.0, (4.0, 1, 0)),  # finite: good + 1
        (INF, (4.0, 0, 1)),  # 1st non-finite: bad + 1, good reset, update skipped
        (8.0, (4.0, 1, 1)),  # finite: good + 1, bad kept (they need not be consecutive)
        (8.0, (4.0, 2, 1)),
        (INF, (2.0, 0, 0)),  # 2nd non-finite (not consecutive): halved, both reset
        (4.0, (2.0, 1, 0)),
        (4.0, (2.0, 2, 0)),
        (4.0, (4.0, 0, 0)),  # 3rd consecutive finite: doubled, both reset
        (INF, (4.0, 0, 1)),
        (INF, (2.0, 0, 0)),
        (INF, (2.0, 0, 1)),
        (INF, (1.0, 0, 0)),
        (INF, (1.0, 0, 1)),
        (INF, (1.0, 0, 0)),  # max(1, 1 * 0.5): never below 1
    ]
    applied, expected_weight = 0, 0.0
    for index, (grad, after) in enumerate(steps):
        scale = state(opt)[0]
        opt.apply_gradients([(tf.constant([grad]), weight)])
        assert state(opt) == after, f"step {index + 1}"
        if np.isfinite(grad):
            applied += 1
            expected_weight -= grad / scale  # SGD(1) of the unscaled gradient: exact
        # skipped steps leave the weight and the step count (T2T's global step) alone
        assert weight.numpy()[0] == expected_weight, f"step {index + 1}"
        assert int(opt.iterations.numpy()) == applied, f"step {index + 1}"
    # Keras's own rule halves at every non-finite step (and never stops at 1): not this one
    keras_opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1.0), 4.0)
    keras_opt.build([weight])
    keras_opt.apply_gradients([(tf.constant([INF]), weight)])
    assert float(keras_opt.dynamic_scale.numpy()) == 2.0


def test_the_scale_rises_only_to_a_finite_value():
    big = float(np.finfo(np.float32).max) / 1.5  # doubled: inf in float32
    opt, _ = sgd_scaler(big, incr_every_n_steps=1)
    opt.apply_gradients([(tf.constant([0.0]), opt._trainable_variables[0])])
    assert state(opt) == (float(np.float32(big)), 0, 0)  # kept, counts reset


def test_gradients_are_unscaled_by_the_reciprocal_as_tf_1_15s():
    """_down_scale multiplies by reciprocal(scale): at scale 3, 5 * (1/3) and 5/3 differ in
    float32 (1.6666667 and 1.6666666)."""
    opt, weight = sgd_scaler(3.0)
    opt.apply_gradients([(tf.constant([5.0]), weight)])
    times_reciprocal = np.float32(5.0) * (np.float32(1.0) / np.float32(3.0))
    assert times_reciprocal != np.float32(5.0) / np.float32(3.0)
    assert weight.numpy()[0] == -times_reciprocal


def test_the_loss_scale_state_is_in_the_checkpoint(tmp_path):
    opt, weight = sgd_scaler(8.0, incr_every_n_steps=5)
    for grad in (8.0, INF, 8.0):
        opt.apply_gradients([(tf.constant([grad]), weight)])
    assert state(opt) == (8.0, 1, 1)
    path = tf.train.Checkpoint(optimizer=opt).save(str(tmp_path / "ckpt"))
    resumed, _ = sgd_scaler(32768.0, incr_every_n_steps=5)
    tf.train.Checkpoint(optimizer=resumed).restore(path).assert_existing_objects_matched()
    assert state(resumed) == (8.0, 1, 1)
    resumed.apply_gradients([(tf.constant([INF]), resumed._trainable_variables[0])])
    assert state(resumed) == (4.0, 0, 0)  # its second non-finite step, as unbroken


def t2t_hparams(overrides: str = "") -> HParams:
    return registry.hparams("transformer_tiny").parse(overrides)


def test_the_hparams_choose_t2ts_loss_scaler(capsys):
    sgd = keras.optimizers.SGD(1.0)
    opt = loss_scaled(sgd, t2t_hparams("activation_dtype=float16"))
    assert type(opt) is T2TLossScaleOptimizer
    # the train step's loss scaling sees it (train_step.py's isinstance checks)
    assert isinstance(opt, keras.optimizers.LossScaleOptimizer)
    assert opt.inner_optimizer is sgd
    # T2T's basic_params1 init_loss_scale 2**15, and optimize.py's manager arguments
    assert (opt.initial_scale, opt.incr_every_n_steps, opt.decr_every_n_nan_or_inf) == (
        2**15,
        2000,
        2,
    )
    assert (opt.incr_ratio, opt.decr_ratio) == (2, 0.5)
    hp = t2t_hparams("activation_dtype=float16,mixed_precision_optimizer_init_loss_scale=1024")
    assert loss_scaled(sgd, hp).initial_scale == 1024
    # an empty loss scaler: no loss scaling, T2T's warning
    hp = t2t_hparams("activation_dtype=float16,mixed_precision_optimizer_loss_scaler=")
    assert loss_scaled(sgd, hp) is sgd
    assert "without loss scaling" in capsys.readouterr().err
    # a float16 run without T2T's float16 activations (--gpu_automatic_mixed_precision,
    # --mixed_precision=float16): Keras's dynamic loss scale
    assert type(loss_scaled(sgd, t2t_hparams())) is keras.optimizers.LossScaleOptimizer


def test_t2ts_value_errors_of_the_loss_scaler_come_before_any_work():
    for overrides, message in (
        ("mixed_precision_optimizer_loss_scaler=fixed", "only supports the exponential"),
        ("optimizer=multistep_adam,optimizer_multistep_accumulate_steps=2", "multistep_adam"),
    ):
        hp = t2t_hparams(f"activation_dtype=float16,{overrides}")
        with pytest.raises(HParamsError, match=message) as refused:
            checks.validate(hp, training=True)
        assert "\n" not in str(refused.value)
        assert isinstance(refused.value, ValueError)  # T2T's type
        checks.validate(t2t_hparams(overrides), training=True)  # read only for float16


def config(**flags) -> TrainerConfig:
    return TrainerConfig("translate_toy", "transformer_tiny", "d", "o", **flags)


def test_float16_activations_train_under_the_mixed_float16_policy():
    hp = t2t_hparams("activation_dtype=float16")
    assert setup_precision(config(), hp).mixed_precision == "float16"
    assert keras.mixed_precision.global_policy().name == "mixed_float16"
    assert setup_precision(config(mixed_precision="float16"), hp).mixed_precision == "float16"
    with pytest.raises(TrainingError, match="ask for two precisions"):
        setup_precision(config(mixed_precision="bfloat16"), hp)
    # T2T's optimize.py: RuntimeError with its graph rewrite, by the flag or the hparam
    for auto_hp, flag in ((hp, True), (t2t_hparams("activation_dtype=float16"), False)):
        if not flag:
            auto_hp.set_hparam("gpu_automatic_mixed_precision", True)
        with pytest.raises(RuntimeError, match="cannot be used with manual mixed precision"):
            setup_precision(config(mixed_precision="float16"), auto_hp, flag)


def test_t2ts_fairseq_float16_set_is_registered():
    hp = registry.hparams("transformer_fairseq_fp16_activation_big")
    assert (hp.activation_dtype, hp.batch_size, hp.hidden_size) == ("float16", 3584, 1024)
    assert type(loss_scaled(keras.optimizers.SGD(1.0), hp)) is T2TLossScaleOptimizer


def test_a_model_trained_with_float16_activations_decodes_in_float16(tmp_path, capsys):
    """T2T's model computes in float16 when decoding too (its _custom_getter is set in infer as
    in call), so the decoder builds it under the mixed float16 policy, as for bfloat16."""
    from t2t_repro.decoding import runner
    from tests.model_utils import toy_checkpoint_dir

    root = toy_checkpoint_dir(tmp_path, overrides="max_length=12,activation_dtype=float16")
    setup = runner.load_decoder(
        "translate_toy",
        "",
        "",
        str(root / "data"),
        str(root / "train"),
        decode_overrides="beam_size=1",
    )
    assert setup.dhp.precision == "float16"
    assert "note: decoding in float16" in capsys.readouterr().err
    assert setup.model.compute_dtype == "float16"
    assert keras.mixed_precision.global_policy().name == "float32"  # restored after loading
    assert len(setup.decoder.decode_lines(["a b c"])) == 1


def test_the_start_line_says_whether_the_loss_is_scaled():
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.optimizers.loss_scale import scales_loss

    assert scales_loss(create_hparams("transformer_tiny", "activation_dtype=float16"))
    assert not scales_loss(
        create_hparams(
            "transformer_tiny", "activation_dtype=float16,mixed_precision_optimizer_loss_scaler="
        )
    )
    assert scales_loss(create_hparams("transformer_tiny", ""))  # --mixed_precision=float16
