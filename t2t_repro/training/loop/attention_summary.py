"""Attention heat maps of one dev example for TensorBoard (the paper's Figures 3-5).

Why its own module: the trainer only asks for images at each evaluation; which example,
its labels and the plotting stay here and in ``visualization/attention_maps.py``.
"""

from __future__ import annotations

import keras

from t2t_repro.data.input_pipeline import EVAL, make_dataset
from t2t_repro.visualization import attention_maps


class AttentionSummary:
    """The first dev example, read once; ``images(model)`` draws its maps for the model now."""

    def __init__(self, problem, data_dir: str, hparams) -> None:
        pattern = problem.filepattern(data_dir, "dev")
        read = problem.read_example_fn(EVAL, hparams)
        # The first row of the first batch (not ``unbatch``: TensorFlow crashes unbatching a
        # language model's empty [B, 0] inputs).
        batch = next(iter(make_dataset(pattern, EVAL, hparams, read_example=read).take(1)))
        encoders = problem.get_encoders(data_dir)
        self.ids = {k: [int(i) for i in batch[k][0].numpy() if i] for k in ("inputs", "targets")}
        self.labels = {k: attention_maps.token_labels(encoders[k], self.ids[k]) for k in self.ids}

    def images(self, model: keras.Model) -> dict:
        """Last layer, all heads: ``{"attention/<name>": summary image}``; none for a model
        without layers."""
        try:
            pixels = attention_maps.attention_images(
                model,
                self.ids["inputs"],
                self.ids["targets"],
                self.labels["inputs"],
                self.labels["targets"],
            )
        except attention_maps.NoAttentionLayers:
            return {}
        return {
            f"attention/{name}": attention_maps.summary_image(rgba) for name, rgba in pixels.items()
        }
