"""T2T's encoder pad remover (layers/pad_remover.py): FFN on real tokens, zeros at padding.

The same weights with and without the pad remover must give the same encoder outputs at
real positions and the same logits; at padding the encoder FFN adds nothing, so the encoder
output there is the final LayerNorm of the residual stream. Under XLA (mask instead of
gather) the outputs are the same.
"""

import numpy as np
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.layers.attention import attention_bias_ignore_padding
from t2t_repro.layers.feed_forward import DenseReluDense
from t2t_repro.layers.pad_remover import PadRemover

IDS = np.array([[5, 9, 3, 1, 0, 0], [7, 1, 0, 0, 0, 0], [4, 4, 8, 2, 6, 1]], np.int32)
TARGETS = np.array([[3, 4, 1, 0], [2, 1, 0, 0], [5, 6, 7, 1]], np.int32)


def twin_models(overrides=""):
    models = []
    for use in (True, False):
        hp = create_hparams(
            "transformer_tiny",
            f"use_pad_remover={use}{overrides}",
            input_vocab_size=12,
            target_vocab_size=12,
        )
        model = registry.model("transformer")(hp)
        model.build()
        models.append(model)
    for a, b in zip(models[0].weights, models[1].weights, strict=True):
        b.assign(a)
    return models


def test_ffn_output_is_zero_at_padding_and_unchanged_elsewhere():
    ffn = DenseReluDense(16, 8)
    x = tf.random.stateless_normal([3, 6, 8], seed=[1, 2]) + 1.0
    remover = PadRemover(attention_bias_ignore_padding(IDS))
    with_remover = ffn(x, pad_remover=remover).numpy()
    plain = ffn(x).numpy()
    pad = IDS == 0
    assert np.abs(plain[pad]).max() > 0.1  # The plain FFN is not zero there...
    np.testing.assert_array_equal(with_remover[pad], 0.0)  # ...the pad remover's is.
    np.testing.assert_allclose(with_remover[~pad], plain[~pad], atol=1e-6, rtol=0)


def test_encoder_and_logits_equal_at_real_positions():
    removing, plain = twin_models()
    enc_a, _ = removing.encode(tf.constant(IDS))
    enc_b, _ = plain.encode(tf.constant(IDS))
    pad = IDS == 0
    np.testing.assert_allclose(enc_a.numpy()[~pad], enc_b.numpy()[~pad], atol=1e-5, rtol=0)
    assert np.abs(enc_a.numpy()[pad] - enc_b.numpy()[pad]).max() > 1e-3
    features = {"inputs": IDS, "targets": TARGETS}
    np.testing.assert_allclose(
        removing(features).numpy(), plain(features).numpy(), atol=1e-5, rtol=0
    )


def test_xla_mask_mode_equals_gather_mode():
    removing, _ = twin_models()
    eager, _ = removing.encode(tf.constant(IDS))
    compiled, _ = tf.function(removing.encode, jit_compile=True)(tf.constant(IDS))
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), atol=1e-5, rtol=0)


def test_training_mask_mode_equals_inference_gather_mode():
    """In training the FFN runs on every row and is masked; without dropout the outputs are
    those of inference's gather path."""
    no_dropout = ",layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0"
    removing, plain = twin_models(no_dropout)
    trained, _ = removing.encode(tf.constant(IDS), training=True)
    inferred, _ = removing.encode(tf.constant(IDS), training=False)
    np.testing.assert_allclose(trained.numpy(), inferred.numpy(), atol=1e-5, rtol=0)
    unmasked, _ = plain.encode(tf.constant(IDS), training=True)
    assert np.abs(trained.numpy()[IDS == 0] - unmasked.numpy()[IDS == 0]).max() > 1e-3


def test_training_gradients_flow_through_the_pad_remover():
    removing, _ = twin_models()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(removing({"inputs": IDS, "targets": TARGETS}, training=True) ** 2)
    kernel = removing.encoder.layer_0.ffn.sublayer.conv1.kernel
    grad = tape.gradient(loss, kernel)
    assert grad is not None and np.isfinite(grad.numpy()).all() and np.abs(grad).max() > 0
