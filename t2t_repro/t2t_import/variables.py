"""Which T2T 1.x checkpoint variable holds each weight of our Transformer (and its Adam slots).

Names are T2T's scopes (``models/transformer.py``, ``layers/common_attention.py,
multihead_attention``, ``layers/common_layers.py, layer_preprocess / layer_postprocess /
layer_norm``, ``layers/modalities.py, get_weights``), checked against variables that T2T
1.15.7 itself created (tests/data/t2t_reference):

* ``<model>/body/{encoder,decoder}/layer_i/{self_attention,encdec_attention}/
  multihead_attention/{q,k,v,output_transform}/kernel``, ``.../ffn/conv1|conv2/{kernel,bias}``;
  relative self-attention's tables ``.../multihead_attention/dot_product_attention_relative/
  relative_positions_{keys,values}/embeddings`` (``dot_product_attention_relative``);
  with ``attention_variables_3d`` T2T's ``.../multihead_attention/{q,k,v}`` [d, heads,
  d/heads] and ``.../o`` [heads, d/heads, d] instead of the four kernels (``compute_attention_
  component``, ``multihead_attention`` with ``vars_3d``): the same matrices, reshaped;
* layer norms: a sublayer's preprocess under ``<sublayer>/layer_prepostprocess/layer_norm``,
  its postprocess (the paper's post-norm) under ``<sublayer>/layer_postprocess/layer_norm``,
  each stack's final one under ``<stack>/layer_prepostprocess/layer_norm``;
* embeddings: ``<model>/symbol_modality_<V>_<d>/{shared,input_emb,target_emb,softmax}/
  weights_0..S-1``, row shards joined in numeric order (weights_2 before weights_10);
* ``<model>/body/target_space_embedding/kernel``;
* learned positions (``pos=emb``): ``<model>/body/{inputs,targets}_positional_embedding``
  (``layers/common_attention.py``, ``add_positional_embedding``).

A language model (a problem without inputs) has no ``encoder`` scope, no ``encdec_attention``
and no target-space embedding (``tests/data/t2t_reference/t2t_lm_train_dir``).

Adam's first and second moments are ``<name>/Adam`` and ``<name>/Adam_1`` (under T2T's
``training/`` scope); ``beta1_power``/``beta2_power`` and ``global_step`` sit beside them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from t2t_repro.t2t_import.errors import T2TImportError

# T2T bookkeeping variables that hold no model or optimizer state.
BOOKKEEPING = re.compile(r"^(losses_avg|train_stats)/|^global_step$|^(training/)?beta[12]_power$")
MODALITY = re.compile(
    r"/symbol_modality_(?P<vocab>\d+)_(?P<depth>\d+)/"
    r"(?P<role>shared|input_emb|target_emb|softmax)/weights_\d+$"
)

CLASS_LABEL_MODALITY = re.compile(
    r"/(?P<role>class_label)_modality_(?P<vocab>\d+)_(?P<depth>\d+)/.*dense/kernel$"
)


@dataclass(frozen=True)
class Entry:
    """One variable of ours and the T2T name (or, for embeddings, shard scope) holding it."""

    t2t_name: str
    variable: object
    sharded: bool = False
    t2t_shape: tuple[int, ...] | None = None  # T2T's own shape when it is not ours (3-D)


def _norms(scope: str, sequence) -> Iterator[Entry]:
    for k, norm in enumerate(sequence.norms):
        name = f"{scope}/layer_norm" + (f"_{k}" if k else "")
        yield Entry(f"{name}/layer_norm_scale", norm.gamma)
        yield Entry(f"{name}/layer_norm_bias", norm.beta)


def _residual(scope: str, residual) -> Iterator[Entry]:
    yield from _norms(f"{scope}/layer_prepostprocess", residual.pre)
    yield from _norms(f"{scope}/layer_postprocess", residual.post)


def _projections(scope: str, residual) -> Iterator[Entry]:
    """q, k, v and the output kernels; with ``vars_3d`` T2T's 3-D q, k, v [d, h, d/h] and o
    [h, d/h, d] (``t2t_shape``: T2T reshapes each to our 2-D kernel before its product)."""
    attention = residual.sublayer
    for projection in ("q", "k", "v", "output_transform"):
        kernel = getattr(attention, projection).kernel
        if not attention.vars_3d:
            yield Entry(f"{scope}/{projection}/kernel", kernel)
        else:
            name = "o" if projection == "output_transform" else projection
            yield Entry(f"{scope}/{name}", kernel, t2t_shape=kernel.t2t_shape)


def _stack(scope: str, stack, attentions: tuple[str, ...]) -> Iterator[Entry]:
    for i, layer in enumerate(stack.layers_):
        for name in attentions:
            residual = getattr(layer, name)
            yield from _projections(f"{scope}/layer_{i}/{name}/multihead_attention", residual)
            relative = residual.sublayer.relative
            if relative is not None:
                tables = f"{scope}/layer_{i}/{name}/multihead_attention/{relative.name}"
                yield Entry(f"{tables}/relative_positions_keys/embeddings", relative.keys_table)
                yield Entry(f"{tables}/relative_positions_values/embeddings", relative.values_table)
            yield from _residual(f"{scope}/layer_{i}/{name}", residual)
        for conv in ("conv1", "conv2"):
            dense = getattr(layer.ffn.sublayer, conv)
            yield Entry(f"{scope}/layer_{i}/ffn/{conv}/kernel", dense.kernel)
            yield Entry(f"{scope}/layer_{i}/ffn/{conv}/bias", dense.bias)
        yield from _residual(f"{scope}/layer_{i}/ffn", layer.ffn)
    yield from _norms(f"{scope}/layer_prepostprocess", stack.final)


def _classifier_entries(model, scope: str) -> list[Entry]:
    """T2T's ``transformer_encoder`` with a class-label target: the input embedding, the
    target-space row, the encoder, and ``class_label_top``'s dense layer (its scope nested
    twice, as T2T 1.15.7 names it)."""
    hp = model.hparams
    # The scopes name the sizes rounded up by vocab_divisor: the layers' own rows and units.
    top = f"class_label_modality_{model.class_label.units}_{hp.hidden_size}"
    entries = [
        Entry(
            f"{scope}/symbol_modality_{model.input_embedding.vocab_size}_{hp.hidden_size}/"
            f"{model.input_embedding.name}",
            model.input_embedding.embeddings,
            sharded=True,
        ),
        Entry(f"{scope}/{top}/{top}/dense/kernel", model.class_label.kernel),
        Entry(f"{scope}/{top}/{top}/dense/bias", model.class_label.bias),
    ]
    if model.use_target_space:
        entries.append(
            Entry(f"{scope}/body/target_space_embedding/kernel", model.target_space_embedding)
        )
    entries.extend(_positions(scope, {"inputs": model.input_positional}))
    entries.extend(_stack(f"{scope}/body/encoder", model.encoder, ("self_attention",)))
    return entries


def _positions(scope: str, signals: dict) -> list[Entry]:
    """T2T's learned position tables (``pos=emb``), one a side; none for another signal."""
    return [
        Entry(f"{scope}/body/{side}_positional_embedding", signal.position_embeddings)
        for side, signal in signals.items()
        if signal.mode == "emb"
    ]


def model_entries(model, scope: str = "transformer") -> list[Entry]:
    """Every weight of ``model`` with its T2T name; embeddings once each, as shard scopes."""
    if not getattr(model, "pads_targets", True):  # a class-label target: a classifier
        return _classifier_entries(model, scope)
    hp = model.hparams
    entries = []
    embeddings = {}
    # T2T names each modality by its vocabulary size rounded up by vocab_divisor
    # (utils/t2t_model.py, bottom / _top_single): the layer's rows.
    for layer in (model.input_embedding, model.target_embedding, model.softmax):
        embeddings.setdefault(
            id(layer),
            Entry(
                f"{scope}/symbol_modality_{layer.vocab_size}_{hp.hidden_size}/{layer.name}",
                layer.embeddings,
                sharded=True,
            ),
        )
    entries.extend(embeddings.values())
    if model.use_target_space:
        entries.append(
            Entry(f"{scope}/body/target_space_embedding/kernel", model.target_space_embedding)
        )
    sides = {"inputs": model.input_positional} if model.has_input else {}
    entries.extend(_positions(scope, {**sides, "targets": model.positional}))
    if not model.has_input:  # T2T's language model: the decoder alone, no encdec_attention
        entries.extend(_stack(f"{scope}/body/decoder", model.decoder, ("self_attention",)))
        return entries
    entries.extend(_stack(f"{scope}/body/encoder", model.encoder, ("self_attention",)))
    entries.extend(
        _stack(f"{scope}/body/decoder", model.decoder, ("self_attention", "encdec_attention"))
    )
    return entries


def has_input(names, scope: str = "transformer") -> bool:
    """Whether the checkpoint has an encoder: T2T's ``Transformer.body`` builds none for a
    problem without inputs (a language model, ``T2TModel.has_input`` false)."""
    return any(name.startswith(f"{scope}/body/encoder/") for name in names)


def vocab_sizes(names, scope: str = "transformer") -> dict[str, int]:
    """input/target vocabulary sizes from the modality scopes' names (``symbol_modality_V_d``;
    a classifier's classes from ``class_label_modality_C_d``): T2T's sizes rounded up by its
    ``vocab_divisor`` (``writer.py`` reads the problem's own from its vocabulary)."""
    roles = {}
    for name in names:
        match = MODALITY.search(name) or CLASS_LABEL_MODALITY.search(name)
        if match and name.startswith(scope + "/"):
            roles[match.group("role")] = int(match.group("vocab"))
    targets = roles.get(
        "class_label", roles.get("target_emb", roles.get("softmax", roles.get("shared")))
    )
    # A language model has no input modality: its "inputs" are the targets' (no input_emb).
    inputs = roles.get("input_emb", roles.get("shared", targets))
    if inputs is None or targets is None:
        raise T2TImportError(
            f"the checkpoint has no {scope}/symbol_modality_<V>_<d>/... "
            "embedding variables: it is not a T2T text transformer (or --model "
            "names another scope)."
        )
    return {"input_vocab_size": inputs, "target_vocab_size": targets}


class CheckpointValues:
    """Reads T2T variables by name, with errors that name what is missing or misshapen."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self.shapes = reader.get_variable_to_shape_map()
        self.used: set[str] = set()

    def _missing(self, name: str, what: str) -> T2TImportError:
        near = difflib.get_close_matches(name, list(self.shapes), n=1, cutoff=0.8)
        hint = f" (nearest in the checkpoint: {near[0]})" if near else ""
        return T2TImportError(
            f"the T2T checkpoint has no {what} {name}{hint}; it was trained "
            "with other hparams or another model."
        )

    def has(self, name: str) -> bool:
        return name in self.shapes

    def get(self, name: str, what: str = "variable") -> np.ndarray:
        if name not in self.shapes:
            raise self._missing(name, what)
        self.used.add(name)
        return self.reader.get_tensor(name)

    def shard_names(self, scope: str, suffix: str = "") -> list[str]:
        """``scope/weights_<i><suffix>`` for i = 0, 1, 2, ..., 10, ... (numeric, not text order)."""
        pattern = re.compile(re.escape(scope) + r"/weights_(\d+)" + re.escape(suffix) + "$")
        found = {int(m.group(1)): n for n in self.shapes if (m := pattern.match(n))}
        if sorted(found) != list(range(len(found))):
            raise T2TImportError(
                f"the embedding shards of {scope} are not weights_0..N "
                f"(found {sorted(found)}); the checkpoint is incomplete."
            )
        return [found[i] for i in range(len(found))]

    def joined(self, scope: str, suffix: str = "", what: str = "variable") -> np.ndarray:
        """weights_0..S-1 (+ suffix) concatenated along the vocabulary axis, numeric order."""
        names = self.shard_names(scope, suffix)
        if not names:
            raise self._missing(f"{scope}/weights_0{suffix}", what)
        return np.concatenate([self.get(n, what) for n in names], axis=0)

    def value(self, entry: Entry, suffix: str = "", what: str = "variable") -> np.ndarray:
        value = (
            self.joined(entry.t2t_name, suffix, what)
            if entry.sharded
            else self.get(entry.t2t_name + suffix, what)
        )
        expected = entry.t2t_shape or tuple(entry.variable.shape)
        if tuple(value.shape) != expected:
            name = entry.t2t_name + ("/weights_*" if entry.sharded else "") + suffix
            raise T2TImportError(
                f"T2T variable {name} has shape {list(value.shape)} but the "
                f"hparams give {list(expected)} ({entry.variable.path}); "
                "hparams.json does not describe this checkpoint."
            )
        return value.reshape(entry.variable.shape) if entry.t2t_shape else value

    def unused(self) -> list[str]:
        return sorted(n for n in self.shapes if n not in self.used and not BOOKKEEPING.search(n))
