"""Every layer round-trips through ``from_config(get_config())`` to the same layer."""

import json

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.layers.attention import MultiHeadAttention
from t2t_repro.layers.dropout import Dropout
from t2t_repro.layers.embedding import SymbolEmbedding
from t2t_repro.layers.feed_forward import DenseReluDense
from t2t_repro.layers.positional import PositionalSignal
from t2t_repro.layers.prepost import AttentionResidual, LayerPrePostProcess, Residual
from t2t_repro.layers.slot_features import SlotFeatures
from t2t_repro.layers.transformer_layers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    StackConfig,
)

D = 8
CFG = StackConfig(
    num_layers=2,
    hidden_size=D,
    filter_size=12,
    num_heads=2,
    key_channels=D,
    value_channels=D,
    attention_dropout=0.1,
    relu_dropout=0.1,
    prepost_dropout=0.1,
    preprocess="n",
    postprocess="da",
    attention_broadcast_dims=(0, 1),  # T2T's TPU sets' dropout broadcast dims
    relu_broadcast_dims=(1,),
    prepost_broadcast_dims=(1,),
)
X = tf.random.stateless_normal([2, 3, D], seed=[1, 2])
MEMORY = tf.random.stateless_normal([2, 4, D], seed=[3, 4])
CAUSAL = tf.constant(np.triu(np.full([3, 3], -1e9, np.float32), 1)[None, None])
MEMORY_BIAS = tf.constant([[[[0.0, 0.0, 0.0, -1e9]]], [[[0.0, 0.0, 0.0, 0.0]]]])
HIDDEN = (None, None, D)
SIGNAL = PositionalSignal("timing", D, 16, name="positional")

# (layer, its build arguments, a function running it on fixed inputs)
CASES = {
    "embedding": (
        SymbolEmbedding(20, D, name="shared"),
        (),
        lambda layer: layer(tf.constant([[0, 3, 7]])),
    ),
    "positional": (
        PositionalSignal("emb", D, 16, name="positional"),
        (),
        lambda layer: layer(X, start=2),
    ),
    "ffn": (DenseReluDense(12, D, 0.1, name="dense_relu_dense"), (HIDDEN,), lambda layer: layer(X)),
    "attention": (
        MultiHeadAttention(2, D, 6, D, 0.1, name="multihead_attention"),
        (HIDDEN, HIDDEN),
        lambda layer: layer(X, MEMORY, bias=MEMORY_BIAS),
    ),
    "prepost": (
        LayerPrePostProcess("dan", 0.1, 1e-5, name="post"),
        (HIDDEN,),
        lambda layer: layer(X, residual=2 * X),
    ),
    "residual": (
        Residual(DenseReluDense(12, D, name="dense_relu_dense"), "n", "da", 0.1, name="ffn"),
        (HIDDEN,),
        lambda layer: layer(X),
    ),
    "attention_residual": (
        AttentionResidual(
            MultiHeadAttention(2, D, D, D, name="mha"), "none", "dan", 0.1, name="self_attention"
        ),
        (HIDDEN,),
        lambda layer: layer(X, bias=CAUSAL),
    ),
    "encoder_layer": (
        EncoderLayer(CFG, name="layer_0"),
        (HIDDEN,),
        lambda layer: layer(X, MEMORY_BIAS[:, :, :, :3]),
    ),
    "decoder_layer": (
        DecoderLayer(CFG, name="layer_0"),
        (HIDDEN, HIDDEN),
        lambda layer: layer(X, MEMORY, CAUSAL, MEMORY_BIAS),
    ),
    "encoder": (
        Encoder(CFG, name="encoder"),
        (HIDDEN,),
        lambda layer: layer(X, MEMORY_BIAS[..., :3]),
    ),
    "decoder": (
        Decoder(CFG, name="decoder"),
        (HIDDEN,),
        lambda layer: layer(X, MEMORY, CAUSAL, MEMORY_BIAS),
    ),
    "slot_features": (
        SlotFeatures(3, 6, source_feed=True, name="slot_features"),
        (),
        lambda layer: layer.full_pass(X, tf.constant([[3, 9, 5]] * 2), MEMORY, MEMORY_BIAS, SIGNAL),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_from_config_rebuilds_the_same_layer(case):
    layer, build_args, run = CASES[case]
    layer.build(*build_args)
    clone = type(layer).from_config(layer.get_config())
    assert type(clone) is type(layer)
    assert clone.get_config() == layer.get_config()
    clone.build(*build_args)
    assert [(w.path, w.shape) for w in clone.weights] == [(w.path, w.shape) for w in layer.weights]
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(run(clone).numpy(), run(layer).numpy())


def test_residual_config_carries_its_sublayer_unbuilt():
    layer = Residual(DenseReluDense(12, D, 0.2, name="dense_relu_dense"), "n", "da", 0.3, 1e-5)
    layer.build(HIDDEN)
    clone = Residual.from_config(layer.get_config())
    assert isinstance(clone.sublayer, DenseReluDense) and not clone.sublayer.built
    assert (clone.sublayer.filter_size, clone.sublayer.relu_dropout) == (12, 0.2)
    assert (clone.pre.sequence, clone.post.sequence, clone.post.epsilon) == ("n", "da", 1e-5)


def test_dropout_config_round_trip_keeps_the_rate():
    layer = Dropout(0.25, seed=3)
    clone = Dropout.from_config(layer.get_config())
    assert (clone.rate, clone.seed, clone._threshold) == (0.25, 3, layer._threshold)
    assert clone.broadcast_dims == ()
    # and the broadcast dims, through JSON (a saved model's config)
    config = json.loads(json.dumps(Dropout(0.25, (0, -1), seed=3).get_config()))
    assert Dropout.from_config(config).broadcast_dims == (0, -1)
    stack = json.loads(json.dumps(Encoder(CFG, name="encoder").get_config()))
    assert StackConfig.of(stack["config"]) == CFG
