"""The checkpoint keys and weight paths are a file format: saved checkpoints (and a T2T
checkpoint adapter mapping T2T's variable names onto ours) rely on them, so they are pinned
here, written out from the architecture."""

import tensorflow as tf

from tests.model_utils import build_model

SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def _attention(prefix: str, path: bool) -> list[str]:
    inner = "multihead_attention" if path else "sublayer"
    kernel = "kernel" if path else "_kernel"
    return [f"{prefix}/{inner}/{p}/{kernel}" for p in ("q", "k", "v", "output_transform")]


def _norm(prefix: str) -> list[str]:
    return [f"{prefix}/layer_norm_0/gamma", f"{prefix}/layer_norm_0/beta"]


def _ffn(prefix: str, path: bool) -> list[str]:
    inner, kernel = ("dense_relu_dense", "kernel") if path else ("sublayer", "_kernel")
    return [f"{prefix}/{inner}/{conv}/{w}" for conv in ("conv1", "conv2") for w in (kernel, "bias")]


def _block(prefix: str, path: bool, attentions: tuple) -> list[str]:
    names = []
    for attention in attentions:
        names += _attention(f"{prefix}/{attention}", path) + _norm(f"{prefix}/{attention}/pre")
    return names + _ffn(f"{prefix}/ffn", path) + _norm(f"{prefix}/ffn/pre")


def test_pre_norm_checkpoint_keys_and_weight_paths_are_unchanged(tmp_path):
    model = build_model(
        "transformer_tiny",
        "num_hidden_layers=1,hidden_size=8,filter_size=12,num_heads=2",
        vocab_size=20,
    )
    enc = ("self_attention",)
    dec = ("self_attention", "encdec_attention")
    paths = (
        ["transformer/target_space_embedding", "transformer/shared/weights"]
        + _norm("transformer/encoder/layer_prepostprocess")
        + _block("transformer/encoder/layer_0", True, enc)
        + _norm("transformer/decoder/layer_prepostprocess")
        + _block("transformer/decoder/layer_0", True, dec)
    )
    assert [w.path for w in model.weights] == paths
    keys = (
        ["model/target_embedding/embeddings", "model/target_space_embedding"]
        + _norm("model/encoder/final")
        + _block("model/encoder/layer_0", False, enc)
        + _norm("model/decoder/final")
        + _block("model/decoder/layer_0", False, dec)
    )
    written = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
    stored = {name for name, _ in tf.train.list_variables(written)} - {
        "_CHECKPOINTABLE_OBJECT_GRAPH"
    }
    assert stored == {key + SUFFIX for key in keys}
