"""The bf16 training step's own kernels (issue #58): Adam's XLA update of float32 weights
(``optimizers/fused_adam.py``) and the bf16 layer norm (``layers/layer_norm.py``) keep
mixed_bfloat16 numerics where bf16 arithmetic puts them, and float32 runs keep Keras' Adam
to the bit."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.layer_norm import LayerNorm
from t2t_repro.optimizers.adam import T2TAdam
from t2t_repro.training.loop.train_step import batch_loss_sums
from tests.model_utils import build_model

BF16_ROUNDOFF = 2.0**-8  # bf16 keeps 8 significant bits
F32_ROUNDOFF = 2.0**-24


@pytest.fixture
def policy():
    """Restores Keras' global policy, which a test sets."""
    previous = keras.mixed_precision.global_policy()
    yield keras.mixed_precision.set_global_policy
    keras.mixed_precision.set_global_policy(previous)


def _adam_steps(optimizer_class, steps: int = 3):
    optimizer = optimizer_class(learning_rate=0.01, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    rng = np.random.default_rng(0)
    shapes = (12, (6, 4), (3, 5, 2))
    weights = [keras.Variable(rng.normal(size=shape).astype(np.float32)) for shape in shapes]
    optimizer.build(weights)

    @tf.function
    def step(seed):
        grads = [tf.random.stateless_normal(w.shape, seed=[seed, i]) for i, w in enumerate(weights)]
        optimizer.apply_gradients(zip(grads, weights, strict=True))

    for seed in range(steps):
        step(tf.constant(seed))
    return [w.numpy() for w in weights]


def test_adam_is_keras_adam_to_the_bit_in_float32(policy):
    policy("float32")
    for ours, keras_own in zip(
        _adam_steps(T2TAdam), _adam_steps(keras.optimizers.Adam), strict=True
    ):
        np.testing.assert_array_equal(ours, keras_own)


def test_adam_computes_the_bias_corrected_rate_and_constants_once_an_update(policy):
    """Keras' Adam builds lr_t (two powers) and its constants (1 - beta_1, 1 - beta_2,
    epsilon) again for each weight; ours once per update."""
    policy("float32")
    betas_and_epsilon = {np.float32(1 - 0.8), np.float32(1 - 0.95), np.float32(1e-7)}

    def graph_ops(optimizer_class) -> tuple[int, int]:
        optimizer = optimizer_class(learning_rate=0.01, beta_1=0.8, beta_2=0.95, epsilon=1e-7)
        weights = [keras.Variable(np.ones(shape, np.float32)) for shape in (3, (2, 2), 4, 5)]
        optimizer.build(weights)

        @tf.function
        def step():
            optimizer.apply_gradients([(tf.ones_like(w), w) for w in weights])

        ops = step.get_concrete_function().graph.get_operations()
        constants = [
            tf.make_ndarray(op.get_attr("value"))
            for op in ops
            if op.type == "Const" and op.get_attr("dtype") == tf.float32
        ]
        return (
            sum(op.type == "Pow" for op in ops),
            sum(c.shape == () and c.item() in betas_and_epsilon for c in constants),
        )

    assert graph_ops(keras.optimizers.Adam) == (2 * 4, 3 * 4)  # what the rule replaces
    assert graph_ops(T2TAdam) == (2, 3)


def test_fused_adam_is_keras_adam_to_float32_rounding_in_bf16_runs(policy):
    policy("mixed_bfloat16")
    steps = 3
    for ours, keras_own in zip(
        _adam_steps(T2TAdam, steps), _adam_steps(keras.optimizers.Adam, steps), strict=True
    ):
        # Each step's update lr_t * m / (sqrt(v) + eps) is below 0.05 here: lr_t =
        # 0.01 sqrt(1-0.98^t) / (1-0.9^t) <= 0.015, and by Cauchy-Schwarz |m| / sqrt(v) <=
        # (1-0.9) / sqrt(1-0.98) * sqrt(sum_{i<t} (0.9^2/0.98)^i) <= 1.2 for t <= 3. It rounds
        # differently in about ten operations (XLA may fuse a multiply and an add; the rate
        # lr_t is Keras' own, from TensorFlow's kernels); the weights' own subtraction adds up
        # to one rounding of the weight per evaluation.
        bound = steps * (10 * F32_ROUNDOFF * 0.05 + F32_ROUNDOFF * np.abs(keras_own).max() * 2)
        np.testing.assert_allclose(ours, keras_own, rtol=0, atol=bound)


def _tiny_loss(precision: str, weights=None):
    overrides = "layer_prepostprocess_dropout=0,attention_dropout=0,relu_dropout=0"
    model = build_model("transformer_tiny", overrides, vocab_size=20)
    if weights is None:  # layer norms away from 1 and 0, so their affine part counts
        rng = np.random.default_rng(2)
        for norm in (x for x in model._flatten_layers() if isinstance(x, LayerNorm)):
            norm.gamma.assign(rng.uniform(0.5, 1.5, norm.gamma.shape).astype(np.float32))
            norm.beta.assign(rng.normal(0, 0.5, norm.beta.shape).astype(np.float32))
    else:
        model.set_weights(weights)
    ids = np.random.default_rng(1).integers(2, 20, size=(4, 6)).astype(np.int32)
    ids[:, -1] = 1
    batch = {"inputs": tf.constant(ids[::-1].copy()), "targets": tf.constant(ids)}
    total, count = batch_loss_sums(model, batch, 0.0)
    logits = model.output_logits(model.decoder_output(batch, training=True))
    return float(total / count), model, float(tf.reduce_max(tf.abs(logits)))


def test_bf16_step_loss_is_the_float32_loss_to_bf16_rounding(policy):
    """A tiny transformer's training loss with the bf16 layer norm equals its float32 loss
    within a first-order worst-case bound of bf16 rounding (loose: the roundings mostly
    cancel; the layer norm's and Adam's own tests above and in test_layer_norm.py are tight)."""
    policy("float32")
    f32_loss, model, max_logit = _tiny_loss("float32")
    policy("mixed_bfloat16")
    bf16_loss, bf16_model, _ = _tiny_loss("bfloat16", model.get_weights())
    hp = model.hparams
    # Each layer rounds its input, the weights and its output to bf16 in each of its
    # contractions (encoder: Q, K, V, scores, weights@V, output, FFN x2; decoder: twice the
    # attention's and the FFN), and its layer norm and residual sum once each: a relative
    # error of 3u per contraction and 2u per layer norm + residual. A token's loss moves by
    # at most 2 max|logit| times the logits' relative error (d loss / d z has l1 norm <= 2).
    layers = hp.num_hidden_layers
    contractions = layers * 8 + layers * 13 + 1
    norms = layers * 2 + layers * 3 + 2
    relative = (3 * contractions + 2 * norms) * BF16_ROUNDOFF
    assert abs(bf16_loss - f32_loss) <= 2 * max_logit * relative
    assert bf16_loss != f32_loss  # the bf16 path ran: its loss rounds differently


def test_profile_prints_the_amx_share_only_on_a_cpu_with_amx():
    from bench.bench_train_step_profile import amx_figure, summary

    report = {
        "cpu": "some CPU",
        "cpu_kind": {"vendor": "GenuineIntel", "family": "6", "model": "143"},
        "precision": "bfloat16",
        "step_tflop": 1.5,
        "step_s_untraced_median": 2.0,
        "step_s_traced": 2.1,
        "non_matmul_s": 0.9,
        "matmul_peak_gflops": 1000.0,
        "amx_estimate": {"share_of_peak_here": 0.75, "share_of_amx_peak": 0.5},
    }
    report["amx_estimate"]["assumed_matmul_speedup"] = 3.0
    for flags, expected in ((["avx512_bf16"], None), (["amx_bf16", "avx512_bf16"], 0.75)):
        report["bf16_instructions"] = flags
        report["amx"] = amx_figure(report)
        if expected is None:
            assert report["amx"] is None
            assert "no AMX here" in summary(report)
        else:  # 1.5 TFLOP in 2 s = 750 GFLOP/s of a 1000 GFLOP/s peak
            assert report["amx"]["share_of_peak"] == pytest.approx(expected)
            assert "AMX: 75.0% of the same-run bf16 peak" in summary(report)
