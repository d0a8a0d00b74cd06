"""Attention pictures: the weights they show are proper attention maps; t2t-attention writes
them."""

import os
import subprocess

import numpy as np
import pytest
import tensorflow as tf
from matplotlib.backends.backend_agg import FigureCanvasAgg

from t2t_repro.visualization.attention_maps import (
    attention_pngs,
    figure,
    layer_weights,
    render,
    render_rgba,
    summary_image,
)
from tests.grappler import grappler_off_env
from tests.model_utils import build_model, toy_checkpoint_dir
from tests.tools import ROOT, TINY_WIDTH, tool_cmd

# The runs check the attention maps' shape and the files written.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


def test_layer_weights_are_distributions_and_causal():
    model = build_model("transformer_tiny", "num_heads=4,num_hidden_layers=2")
    weights, layer = layer_weights(model, [5, 6, 7, 8, 1], [9, 10, 1], -1)
    assert layer == 1
    assert weights["encoder_self"].shape == (4, 5, 5)
    assert weights["decoder_self"].shape == (4, 3, 3)
    assert weights["encdec"].shape == (4, 3, 5)
    for w in weights.values():
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    # Target position i must not see positions after i.
    assert np.all(np.triu(weights["decoder_self"], k=1) < 1e-6)
    with pytest.raises(ValueError, match="out of range"):
        layer_weights(model, [5, 1], [9, 1], 2)


def test_render_draws_one_panel_per_head_with_labels():
    weights = np.random.default_rng(0).dirichlet(np.ones(3), size=(6, 2))
    png = render(weights, ["x", "y"], ["a", "b", "c"], "title")
    image = tf.image.decode_png(png).numpy()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and image.shape[0] > 100 and image.shape[1] > 300
    model = build_model("transformer_tiny", "num_heads=2,num_hidden_layers=1")
    names = set(attention_pngs(model, [5, 1], [6, 1], ["a", "<EOS>"], ["b", "<EOS>"]))
    assert names == {"encoder_self_layer0", "decoder_self_layer0", "encdec_layer0"}


@pytest.mark.parametrize(
    "heads,rows,cols",
    [
        (1, ["a"], ["b"]),  # a short sentence: the titles wider than the heat map
        (5, ["▁Regenschirme", "▁außerordentlich", "<EOS>"], ["▁vorbeifahrende", "▁$x$", "<pad>"]),
    ],
)
def test_every_label_and_title_inside_the_figure_and_its_panel(heads, rows, cols):
    """The margins are computed from the labels, not found by drawing (tight_layout): each
    panel's texts (its tokens on both axes, its title) lie inside the figure and clear of the
    other panels and of the figure's title."""
    weights = np.random.default_rng(0).dirichlet(np.ones(len(cols)), size=(heads, len(rows)))
    fig = figure(weights, rows, cols, "encoder-decoder attention, layer 5")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    assert [t.get_text() for t in fig.texts] == ["encoder-decoder attention, layer 5"]
    boxes = [fig.texts[0].get_window_extent(renderer)]
    boxes += [ax.get_tightbbox(renderer) for ax in fig.axes]
    assert len(fig.axes) == heads
    for h, ax in enumerate(fig.axes):
        assert ax.get_title() == f"head {h}"
        assert sorted(t.get_text() for t in ax.texts) == sorted(rows + cols)
    for i, box in enumerate(boxes):
        assert fig.bbox.containsx(box.x0) and fig.bbox.containsx(box.x1), (i, box, fig.bbox)
        assert fig.bbox.containsy(box.y0) and fig.bbox.containsy(box.y1), (i, box, fig.bbox)
        assert not any(box.overlaps(other) for other in boxes[i + 1 :]), (i, boxes)


def test_tensorboard_gets_the_png_pixels():
    weights = np.random.default_rng(1).dirichlet(np.ones(3), size=(2, 2))
    image = summary_image(render_rgba(weights, ["x", "y"], ["a", "b", "c"], "title"))
    png = render(weights, ["x", "y"], ["a", "b", "c"], "title")
    assert image.dtype == tf.uint8
    np.testing.assert_array_equal(image.numpy(), tf.image.decode_png(png, channels=4)[None])


def test_a_newline_token_is_measured_as_drawn_without_a_warning():
    """A character-level vocabulary's newline token: matplotlib draws a label with a newline
    as two lines, so its width is measured line by line (one string would ask the font for a
    newline glyph: a UserWarning at every evaluation)."""
    import warnings

    weights = np.full((1, 2, 2), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render_rgba(weights, ["a\n", "b"], ["\n", "c"], "title")


@pytest.mark.slow
def test_cli_writes_three_pngs_and_rejects_a_bad_layer(tmp_path):
    # Two layers: by default the pictures are of the last one (layer1), not the first.
    root = toy_checkpoint_dir(tmp_path, "max_length=12", size=f"{TINY_WIDTH},num_hidden_layers=2")
    cmd = tool_cmd(
        "t2t-attention",
        "--problem=translate_toy",
        f"--data_dir={root / 'data'}",
        f"--output_dir={root / 'train'}",
        "--source=ta mib fazz ta zorp .",
        "--decode_hparams=beam_size=2,extra_length=3",
    )
    env = grappler_off_env()  # as the module's in-process runs (tests/grappler.py)
    out = subprocess.run(
        cmd + [f"--out_dir={tmp_path / 'pics'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert sorted(os.listdir(tmp_path / "pics")) == [
        "decoder_self_layer1.png",
        "encdec_layer1.png",
        "encoder_self_layer1.png",
    ]
    out = subprocess.run(
        cmd + ["--layer=5", "--target=si iruk ."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 1 and "out of range" in out.stderr
