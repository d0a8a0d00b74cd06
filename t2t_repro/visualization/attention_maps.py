"""Attention heat maps like the paper's Figures 3-5, as PNGs (files) or RGBA arrays (TensorBoard).

For one (source, target) pair the model is run teacher-forced with ``return_weights``; each
picture shows every head of one layer for one kind of attention (encoder self, decoder self,
encoder-decoder), queries as rows and keys as columns, subword tokens on the axes.

The trainer draws three at every evaluation (issue #57: ~0.6 of a toy run's ~6 CPU-seconds),
so the figure is laid out by arithmetic and drawn once: margins from the labels' measured
widths, not ``tight_layout`` (which drew every label to find them, and made ``savefig`` draw
the figure twice); an axis's tick marks are one line of markers and its labels plain texts,
not a matplotlib tick each (five artists each, made and placed one by one; the same pixels);
TensorBoard gets the canvas's pixels, not a PNG decoded again for ``tf.summary.image``.
"""

from __future__ import annotations

import io

import matplotlib.image
import numpy as np
import tensorflow as tf
from matplotlib import transforms
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.markers import TICKDOWN, TICKLEFT

KINDS = ("encoder_self", "decoder_self", "encdec")
TITLES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "encdec": "encoder-decoder attention",
}
DPI = 80
CELL = 0.22  # inches a token
MIN_PANEL = 2.0  # inches: a short sentence's heat map, wide enough for its title
LABEL_PT, TITLE_PT, SUPTITLE_PT = 7, 9, 12
TICK_SIZE, TICK_WIDTH, TICK_PAD = 3.5, 0.8, 3.5  # points: matplotlib's default ticks
GAP = 0.12  # inches around each panel and under the figure title


class NoAttentionLayers(ValueError):
    """A model of 0 layers (T2T builds one: embeddings and final layer norms) attends nowhere."""


def layer_weights(
    model, input_ids: list[int], target_ids: list[int], layer: int
) -> tuple[dict, int]:
    """({kind: [heads, queries, keys] array}, layer index) of ``layer`` (-1 = the last)."""
    weights = model.attention_weights(
        tf.constant([input_ids], tf.int32), tf.constant([target_ids], tf.int32)
    )
    # A language model has no encoder, a classifier (transformer_encoder) no decoder.
    num_layers = max(len(weights[kind]) for kind in KINDS)
    if num_layers == 0:
        raise NoAttentionLayers("the model has no layer (num_hidden_layers=0): no attention.")
    if not -num_layers <= layer < num_layers:
        raise ValueError(
            f"layer {layer} out of range: the model has {num_layers} layers "
            f"(use 0..{num_layers - 1} or -1 for the last)."
        )
    kinds = [kind for kind in KINDS if weights[kind]]
    return {kind: np.asarray(weights[kind][layer][0]) for kind in kinds}, layer % num_layers


def _text_inches(labels: list[str], points: float) -> float:
    """The widest label's width in inches (matplotlib's own text metrics), line by line as
    matplotlib draws a label with a newline (a character-level token)."""
    measure = RendererAgg(1, 1, DPI).get_text_width_height_descent
    font = FontProperties(size=points)
    lines = (line for s in labels for line in s.split("\n"))
    return max((measure(line, font, False)[0] for line in lines), default=0.0) / DPI


def figure(weights: np.ndarray, row_labels: list[str], col_labels: list[str], title: str) -> Figure:
    """One heat map per head ([heads, rows, cols]) in a grid of up to 4 columns, each with
    its tokens on both axes; every panel's margins hold its labels."""
    heads, n_rows, n_cols = weights.shape
    grid_cols = min(4, heads)
    grid_rows = -(-heads // grid_cols)
    tick, line = (TICK_SIZE + TICK_PAD) / 72, 1.25 / 72  # a line of text is ~1.25x its size
    left = GAP + _text_inches(row_labels, LABEL_PT) + tick
    bottom = GAP + _text_inches(col_labels, LABEL_PT) + tick
    top = GAP + (TITLE_PT * 1.25 + 6) / 72  # the head's title, 6 pt above its axes
    width, height = max(MIN_PANEL, CELL * n_cols), max(MIN_PANEL, CELL * n_rows)
    slot_w, slot_h = left + width + GAP, bottom + height + top
    head = SUPTITLE_PT * line + 2 * GAP
    panels_w = grid_cols * slot_w
    fig_w = max(panels_w, _text_inches([title], SUPTITLE_PT) + 2 * GAP)  # one narrow head
    fig_h = head + grid_rows * slot_h
    fig = Figure(figsize=(fig_w, fig_h), dpi=DPI)
    for h in range(heads):
        r, c = divmod(h, grid_cols)
        x0, y0 = (
            (fig_w - panels_w) / 2 + c * slot_w + left,
            fig_h - head - (r + 1) * slot_h + bottom,
        )
        ax = fig.add_axes((x0 / fig_w, y0 / fig_h, width / fig_w, height / fig_h))
        ax.imshow(weights[h], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_title(f"head {h}", fontsize=TITLE_PT)
        _labels(ax, col_labels, row_labels)
    fig.suptitle(title, fontsize=SUPTITLE_PT, y=1 - GAP / fig_h, va="top")
    return fig


def _labels(ax, col_labels: list[str], row_labels: list[str]) -> None:
    """Tick marks and labels where matplotlib's default ticks put them (the same pixels)."""
    ax.set_xticks([])
    ax.set_yticks([])
    below = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    left = transforms.blended_transform_factory(ax.transAxes, ax.transData)
    marks = {
        "linestyle": "",
        "color": "black",
        "markersize": TICK_SIZE,
        "markeredgewidth": TICK_WIDTH,
    }
    cols, rows = range(len(col_labels)), range(len(row_labels))
    for line in (
        Line2D(cols, [0] * len(cols), marker=TICKDOWN, transform=below, **marks),
        Line2D([0] * len(rows), rows, marker=TICKLEFT, transform=left, **marks),
    ):
        line.set_clip_on(False)
        ax.add_line(line)
    pad = TICK_SIZE + TICK_PAD
    text = {"fontsize": LABEL_PT, "parse_math": False}  # tokens as they are ("$x$")
    at = transforms.offset_copy(below, ax.figure, y=-pad, units="points")
    for j, s in enumerate(col_labels):
        ax.text(j, 0, s, transform=at, rotation=90, ha="center", va="top", **text)
    at = transforms.offset_copy(left, ax.figure, x=-pad, units="points")
    for i, s in enumerate(row_labels):
        ax.text(0, i, s, transform=at, ha="right", va="center_baseline", **text)


def render_rgba(
    weights: np.ndarray, row_labels: list[str], col_labels: list[str], title: str
) -> np.ndarray:
    """[H, W, 4] uint8 pixels of ``figure``, drawn once."""
    canvas = FigureCanvasAgg(figure(weights, row_labels, col_labels, title))
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())


def png(rgba: np.ndarray) -> bytes:
    """PNG bytes of ``rgba``, written as ``savefig`` writes them."""
    buffer = io.BytesIO()
    matplotlib.image.imsave(buffer, rgba, format="png", dpi=DPI)
    return buffer.getvalue()


def render(weights: np.ndarray, row_labels: list[str], col_labels: list[str], title: str) -> bytes:
    """PNG of one heat map per head ([heads, rows, cols]), in a grid of up to 4 columns."""
    return png(render_rgba(weights, row_labels, col_labels, title))


def attention_images(
    model,
    input_ids: list[int],
    target_ids: list[int],
    input_tokens: list[str],
    target_tokens: list[str],
    layer: int = -1,
) -> dict:
    """{f"{kind}_layer{k}": [H, W, 4] uint8 pixels} for the three kinds of attention of one
    layer."""
    weights, k = layer_weights(model, input_ids, target_ids, layer)
    axes = {
        "encoder_self": (input_tokens, input_tokens),
        "decoder_self": (target_tokens, target_tokens),
        "encdec": (target_tokens, input_tokens),
    }
    return {
        f"{kind}_layer{k}": render_rgba(weights[kind], *axes[kind], f"{TITLES[kind]}, layer {k}")
        for kind in KINDS
        if kind in weights
    }


def attention_pngs(
    model,
    input_ids: list[int],
    target_ids: list[int],
    input_tokens: list[str],
    target_tokens: list[str],
    layer: int = -1,
) -> dict:
    """{f"{kind}_layer{k}": PNG bytes}: ``attention_images`` as t2t-attention's files."""
    images = attention_images(model, input_ids, target_ids, input_tokens, target_tokens, layer)
    return {name: png(rgba) for name, rgba in images.items()}


def token_labels(encoder, ids: list[int]) -> list[str]:
    """Readable subtoken strings for axis labels (EOS and PAD named; a byte encoder's bytes as
    text, a lone byte of a multi-byte character as U+FFFD)."""
    names = {0: "<pad>", 1: "<EOS>"}
    labels = [names.get(i) or encoder.decode_list([i])[0] for i in ids]
    return [t.decode("utf-8", "replace") if isinstance(t, bytes) else t for t in labels]


def summary_image(rgba: np.ndarray) -> tf.Tensor:
    """[1, H, W, 4] uint8, what ``tf.summary.image`` takes."""
    return tf.constant(rgba[None])
