"""CTranslate2 export: a trained Transformer as a CTranslate2 ``TransformerSpec`` directory.

Why: CTranslate2 is the CPU inference engine OpenNMT, fairseq and Marian users serve with;
its int8 search is faster than our float32 XLA one. A T2T Transformer maps onto its spec
exactly (``tensor2tensor/models/transformer.py``, ``transformer_encoder`` /
``transformer_decoder``):

- attention has no biases (CTranslate2's are optional and left unset); queries scaled by
  ``key_depth_per_head ** -0.5`` in both (with T2T's ``attention_variables_3d`` the scale is in
  q's weights and none at run time: q goes out times ``key_depth_per_head ** 0.5``);
  self-attention Q, K, V fused into one linear, encoder-decoder K, V into another;
- the FFN is ReLU with biases (``dense_relu_dense``);
- post-norm (``layer_preprocess_sequence`` none, ``layer_postprocess_sequence`` "dan") or
  pre-norm ("n" / "da", with the stacks' final LayerNorm); dropout is inference's identity;
- embeddings scaled by sqrt(d) (``multiply_embedding_mode=sqrt_depth``), then an explicit
  position table per stack: the model's own signal (``timing``, ``timing_paper``, or learned
  ``emb``, T2T's two tables, zero past their end); the learned target-space row is added to
  every encoder position, so it is folded into the encoder's table;
- relative self-attention (T2T's ``dot_product_relative``, ``pos=none``) is CTranslate2's
  ``relative_position`` attention, OpenNMT-py's Shaw et al. attention computed as T2T does
  (scaled queries dotted with the clipped distance's key row, weights summed over its value
  row, the query at the last key in a decoding step): T2T's two tables per layer are its
  ``relative_position_keys``/``_values``; with no position table the target-space row is
  folded into the encoder's embedding rows;
- PAD (id 0) embeds to a zero vector (``modalities.py``, ``symbol_bottom``), and the shifted-in
  first decoder position is zero too (``common_layers.shift_right``): the decoder starts from
  the token of id 0 whose input row is zero, while the output projection keeps its real row.

Tokenisation stays this project's: the vocabularies are the ids themselves ("0", "1", ...),
so the same subword encoder feeds both engines. What the spec cannot hold is refused by name.
A ``t2t_repro.json`` beside the model says which problem, sizes and table length it has.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

import numpy as np

from t2t_repro import fileio
from t2t_repro.decoding.ctranslate2_search import METADATA_FILE
from t2t_repro.hparam import HParams
from t2t_repro.serving import ExportError
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

QUANTIZATIONS = ("float32", "int8", "int8_float32", "int16")
DEFAULT_MAX_POSITIONS = 2048  # rows of the timing-signal tables (positions 0..N-1)
START_ID = 0  # T2T's decoder starts from PAD's (zero) embedding


def token(i: int) -> str:
    """The CTranslate2 token of id ``i``: the id itself."""
    return str(i)


def check_exportable(hp: HParams) -> None:
    """Refuses, naming the hparam, a model CTranslate2's TransformerSpec cannot represent."""

    def refuse(name: str, why: str) -> None:
        raise ExportError(
            f"cannot export to CTranslate2: {name}={hp.get(name)!r} ({why}); export a "
            "SavedModel instead (--export_format=saved_model)."
        )

    if hp.get("class_label_target", False):
        raise ExportError(
            "cannot export a text classifier to CTranslate2: its encoder-only model pools the "
            "first position (BERT's), not T2T's mean over every position, and has no class-label "
            "layer; export a SavedModel instead (--export_format=saved_model)."
        )
    pre, post = (
        ("" if s == "none" else s.replace("d", ""))
        for s in (hp.layer_preprocess_sequence, hp.layer_postprocess_sequence)
    )
    if (pre, post) not in (("", "an"), ("n", "a")):
        refuse(
            "layer_preprocess_sequence",
            f"with layer_postprocess_sequence={hp.layer_postprocess_sequence!r}: only post-norm "
            "(none/dan) and pre-norm (n/da) exist in CTranslate2",
        )
    for name, allowed in (
        ("norm_type", ("layer",)),
        ("ffn_layer", ("dense_relu_dense", "conv_hidden_relu")),
        ("multiply_embedding_mode", ("sqrt_depth", "none", "")),
        ("pos", ("timing", "timing_paper", "emb", "none")),
    ):
        if hp.get(name, allowed[0]) not in allowed:
            refuse(name, f"CTranslate2 has only {', '.join(map(repr, allowed))}")
    for name in ("attention_key_channels", "attention_value_channels"):
        if hp.get(name, 0) not in (0, hp.hidden_size):
            refuse(name, "CTranslate2's fused attention needs hidden_size channels")
    for name in ("slot_signal", "slot_source_feed"):
        if hp.get(name, False):
            refuse(name, "an extra decoder input CTranslate2 has no place for")
    if hp.get("hard_attention_k", 0) > 0:
        refuse("hard_attention_k", "CTranslate2's attention keeps every softmax weight")
    if hp.get("proximity_bias", False):
        refuse("proximity_bias", "CTranslate2's attention has no -log(1 + distance) term")
    if hp.get("unidirectional_encoder", False):
        refuse("unidirectional_encoder", "CTranslate2's encoder attends both ways")
    if relative_positions(hp) and hp.pos != "none":
        refuse("pos", "with relative self-attention CTranslate2 has no position table")


def relative_positions(hp: HParams) -> bool:
    """Whether self-attention is T2T's ``dot_product_relative`` (CTranslate2's
    ``relative_position``: OpenNMT-py's Shaw et al. attention, computed as T2T computes it)."""
    return hp.get("self_attention_type", "dot_product") == "dot_product_relative"


def _dense(layer) -> np.ndarray:
    """A Keras Dense kernel [in, out] as CTranslate2's [out, in]."""
    return np.ascontiguousarray(layer.kernel.numpy().T)


def _set_norm(spec, norm) -> None:
    spec.gamma = norm.gamma.numpy()
    spec.beta = norm.beta.numpy()


def _set_residual_norm(spec, residual) -> None:
    """The one LayerNorm of a sublayer: its pre-process one (pre-norm) or post-process one."""
    norms = residual.pre.norms + residual.post.norms
    _set_norm(spec, norms[0])


def _set_attention(spec, residual, self_attention: bool) -> None:
    attention = residual.sublayer
    q, k, v = (_dense(attention.q), _dense(attention.k), _dense(attention.v))
    if attention.vars_3d:  # CTranslate2 scales the queries at run time: T2T's vars_3d does not
        q = q * np.float32((attention.key_channels // attention.num_heads) ** 0.5)
    if self_attention:
        spec.linear[0].weight = np.concatenate([q, k, v])
    else:
        spec.linear[0].weight = q
        spec.linear[1].weight = np.concatenate([k, v])
    spec.linear[-1].weight = _dense(attention.output_transform)
    if attention.relative is not None:
        spec.relative_position_keys = attention.relative.keys_table.numpy()
        spec.relative_position_values = attention.relative.values_table.numpy()
    _set_residual_norm(spec.layer_norm, residual)


def _set_ffn(spec, residual) -> None:
    ffn = residual.sublayer
    for linear, dense in ((spec.linear_0, ffn.conv1), (spec.linear_1, ffn.conv2)):
        linear.weight = _dense(dense)
        linear.bias = dense.bias.numpy()
    _set_residual_norm(spec.layer_norm, residual)


def _input_rows(embedding) -> np.ndarray:
    """An embedding table with PAD's row zeroed (PAD always embeds to zero here)."""
    table = embedding.embeddings.numpy().copy()
    table[0] = 0.0
    return table


def build_spec(model, max_positions: int = DEFAULT_MAX_POSITIONS):
    """The ``ctranslate2.specs.TransformerSpec`` of ``model`` (weights copied, validated)."""
    import ctranslate2

    hp = model.hparams
    check_exportable(hp)
    if not model.has_input:
        return build_decoder_only_spec(model, max_positions)
    pre_norm = hp.layer_preprocess_sequence not in ("", "none")
    specs = ctranslate2.specs
    relative = relative_positions(hp)
    encoder = specs.TransformerEncoderSpec(
        len(model.encoder.layers_), hp.num_heads, pre_norm=pre_norm, relative_position=relative
    )
    decoder = specs.TransformerDecoderSpec(
        len(model.decoder.layers_), hp.num_heads, pre_norm=pre_norm, relative_position=relative
    )
    scale = hp.multiply_embedding_mode == "sqrt_depth"
    encoder.scale_embeddings = decoder.scale_embeddings = scale
    encoder.embeddings[0].weight = _input_rows(model.input_embedding)
    decoder.embeddings.weight = _input_rows(model.target_embedding)
    decoder.projection.weight = model.softmax.embeddings.numpy()
    space_row = None
    if model.use_target_space:
        space_row = model.target_space_embedding.numpy()[model.target_space_id]
    if relative:  # No position table: the target-space row goes into every input row.
        max_positions = 0
        if space_row is not None:
            rows = encoder.embeddings[0].weight
            encoder.embeddings[0].weight = rows + space_row[None] / (
                hp.hidden_size**0.5 if scale else 1.0
            )
    else:
        encoder_signal = model.input_positional.signal(0, max_positions).numpy()
        if space_row is not None:
            encoder_signal = encoder_signal + space_row[None]
        signal = model.positional.signal(0, max_positions).numpy()
        encoder.position_encodings.encodings = np.ascontiguousarray(encoder_signal)
        decoder.position_encodings.encodings = np.ascontiguousarray(signal)
    for layer_spec, layer in zip(encoder.layer, model.encoder.layers_, strict=True):
        _set_attention(layer_spec.self_attention, layer.self_attention, True)
        _set_ffn(layer_spec.ffn, layer.ffn)
    for layer_spec, layer in zip(decoder.layer, model.decoder.layers_, strict=True):
        _set_attention(layer_spec.self_attention, layer.self_attention, True)
        _set_attention(layer_spec.attention, layer.encdec_attention, False)
        _set_ffn(layer_spec.ffn, layer.ffn)
    if pre_norm:
        _set_norm(encoder.layer_norm, model.encoder.final.norms[0])
        _set_norm(decoder.layer_norm, model.decoder.final.norms[0])
    spec = specs.TransformerSpec(encoder, decoder)
    # the embeddings' rows: vocab_divisor's padded ids too (their tokens come back as ids)
    spec.register_source_vocabulary([token(i) for i in range(model.input_embedding.vocab_size)])
    spec.register_target_vocabulary([token(i) for i in range(model.softmax.vocab_size)])
    config = spec.config
    config.layer_norm_epsilon = hp.norm_epsilon
    config.decoder_start_token = config.bos_token = token(START_ID)
    config.eos_token = token(EOS_ID)
    config.unk_token = token(START_ID)  # T2T's subword vocabularies have no unknown token
    config.add_source_bos = config.add_source_eos = False  # the encoder appends EOS itself
    spec.validate()
    return spec, max_positions


def build_decoder_only_spec(model, max_positions: int = DEFAULT_MAX_POSITIONS):
    """A language model's (no inputs) ``TransformerDecoderModelSpec``: T2T's decoder without
    encoder-decoder attention, for ``ctranslate2.Generator``; the decoder's start token is
    PAD's zero row, as the shifted-in first position (``decoding/ctranslate2_generator.py``
    forces the prompt after it)."""
    import ctranslate2

    hp = model.hparams
    specs = ctranslate2.specs
    pre_norm = hp.layer_preprocess_sequence not in ("", "none")
    relative = relative_positions(hp)
    decoder = specs.TransformerDecoderSpec(
        len(model.decoder.layers_),
        hp.num_heads,
        pre_norm=pre_norm,
        relative_position=relative,
        with_encoder_attention=False,
    )
    decoder.scale_embeddings = hp.multiply_embedding_mode == "sqrt_depth"
    decoder.embeddings.weight = _input_rows(model.target_embedding)
    decoder.projection.weight = model.softmax.embeddings.numpy()
    if relative:
        max_positions = 0
    else:
        signal = model.positional.signal(0, max_positions).numpy()
        decoder.position_encodings.encodings = np.ascontiguousarray(signal)
    for layer_spec, layer in zip(decoder.layer, model.decoder.layers_, strict=True):
        _set_attention(layer_spec.self_attention, layer.self_attention, True)
        _set_ffn(layer_spec.ffn, layer.ffn)
    if pre_norm:
        _set_norm(decoder.layer_norm, model.decoder.final.norms[0])
    spec = specs.TransformerDecoderModelSpec(decoder)
    spec.register_vocabulary([token(i) for i in range(model.softmax.vocab_size)])
    config = spec.config
    config.layer_norm_epsilon = hp.norm_epsilon
    config.bos_token = token(START_ID)
    config.eos_token = token(EOS_ID)
    config.unk_token = token(START_ID)
    spec.validate()
    return spec, max_positions


def export_ctranslate2(
    model,
    export_dir: str,
    quantization: str = "float32",
    metadata: dict | None = None,
    max_positions: int = DEFAULT_MAX_POSITIONS,
) -> str:
    """Writes the CTranslate2 model directory ``export_dir`` (via a temp dir, renamed when
    complete); ``metadata`` (problem name, checkpoint) goes into ``t2t_repro.json``."""
    if quantization not in QUANTIZATIONS:
        raise ExportError(
            f"--ct2_quantization={quantization!r} must be one of {', '.join(QUANTIZATIONS)}."
        )
    if fileio.exists(export_dir):
        raise FileExistsError(
            f"{export_dir} already exists; choose another --export_dir or remove it."
        )
    spec, max_positions = build_spec(model, max_positions)
    spec.optimize(quantization=quantization)
    hp = model.hparams
    info = dict(
        metadata or {},
        format="ctranslate2",
        quantization=quantization,
        input_vocab_size=hp.input_vocab_size,
        target_vocab_size=hp.target_vocab_size,
        vocab_divisor=hp.get("vocab_divisor", 1),  # the decoder's logits are rounded up
        max_length=hp.get("max_length", 0),
        max_positions=max_positions,
        has_input=model.has_input,  # False: a decoder-only model, for ctranslate2.Generator
    )
    parent = os.path.dirname(fileio.expand(export_dir))
    fileio.makedirs(parent)
    work = tempfile.mkdtemp(prefix=".ct2-", dir=None if fileio.is_url(parent) else parent)
    try:
        staging = os.path.join(work, "model")
        os.makedirs(staging)
        spec.save(staging)
        with open(os.path.join(staging, METADATA_FILE), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=2, sort_keys=True)
            f.write("\n")
        fileio.replace_dir(staging, export_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return export_dir


def default_ctranslate2_dir(output_dir: str) -> str:
    """``<output_dir>/export/ctranslate2-<unix time>`` (beside the SavedModels; TF Serving
    ignores names that are not numbers)."""
    return os.path.join(output_dir, "export", f"ctranslate2-{int(time.time())}")
