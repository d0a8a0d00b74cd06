"""Attention heat maps like the paper's Figures 3-5, as PNGs (files or TensorBoard images).

For one (source, target) pair the model is run teacher-forced with ``return_weights``; each
picture shows every head of one layer for one kind of attention (encoder self, decoder self,
encoder-decoder), queries as rows and keys as columns, subword tokens on the axes.
"""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")  # No display: render to memory.
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

KINDS = ("encoder_self", "decoder_self", "encdec")
TITLES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "encdec": "encoder-decoder attention",
}


def layer_weights(
    model, input_ids: list[int], target_ids: list[int], layer: int
) -> tuple[dict, int]:
    """({kind: [heads, queries, keys] array}, layer index) of ``layer`` (-1 = the last)."""
    weights = model.attention_weights(
        tf.constant([input_ids], tf.int32), tf.constant([target_ids], tf.int32)
    )
    # A language model has no encoder, a classifier (transformer_encoder) no decoder.
    num_layers = max(len(weights[kind]) for kind in KINDS)
    if not -num_layers <= layer < num_layers:
        raise ValueError(
            f"layer {layer} out of range: the model has {num_layers} layers "
            f"(use 0..{num_layers - 1} or -1 for the last)."
        )
    kinds = [kind for kind in KINDS if weights[kind]]
    return {kind: np.asarray(weights[kind][layer][0]) for kind in kinds}, layer % num_layers


def render(weights: np.ndarray, row_labels: list[str], col_labels: list[str], title: str) -> bytes:
    """PNG of one heat map per head ([heads, rows, cols]), in a grid of up to 4 columns."""
    heads = weights.shape[0]
    cols = min(4, heads)
    rows = math.ceil(heads / cols)
    cell = 0.22
    width = max(3.0, cell * len(col_labels) + 1.2)
    height = max(3.0, cell * len(row_labels) + 1.2)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.axis("off")
            continue
        ax.imshow(weights[h], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_title(f"head {h}", fontsize=9)
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(row_labels)), row_labels, fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return buffer.getvalue()


def attention_pngs(
    model,
    input_ids: list[int],
    target_ids: list[int],
    input_tokens: list[str],
    target_tokens: list[str],
    layer: int = -1,
) -> dict:
    """{f"{kind}_layer{k}": PNG bytes} for the three kinds of attention of one layer."""
    weights, k = layer_weights(model, input_ids, target_ids, layer)
    axes = {
        "encoder_self": (input_tokens, input_tokens),
        "decoder_self": (target_tokens, target_tokens),
        "encdec": (target_tokens, input_tokens),
    }
    return {
        f"{kind}_layer{k}": render(weights[kind], *axes[kind], f"{TITLES[kind]}, layer {k}")
        for kind in KINDS
        if kind in weights
    }


def token_labels(encoder, ids: list[int]) -> list[str]:
    """Readable subtoken strings for axis labels (EOS and PAD named; a byte encoder's bytes as
    text, a lone byte of a multi-byte character as U+FFFD)."""
    names = {0: "<pad>", 1: "<EOS>"}
    labels = [names.get(i) or encoder.decode_list([i])[0] for i in ids]
    return [t.decode("utf-8", "replace") if isinstance(t, bytes) else t for t in labels]


def png_to_summary_image(png: bytes) -> tf.Tensor:
    """[1, H, W, 4] uint8, what ``tf.summary.image`` takes."""
    return tf.image.decode_png(png, channels=4)[None]
