"""Attention heat maps of one dev example for TensorBoard (the paper's Figures 3-5).

Why its own module: the trainer only asks for images at each evaluation; which example,
its labels and the plotting stay here and in ``visualization/attention_maps.py``.
"""

from __future__ import annotations

import keras

from t2t_repro.data.input_pipeline import EVAL, make_dataset
from t2t_repro.visualization import attention_maps


def first_example(batch: dict, feature: str) -> list[int]:
    """The non-PAD ids of the batch's first row; of its first example where it is packed."""
    ids = batch[feature][0].numpy()
    segments = batch.get(f"{feature}_segmentation")
    if segments is not None:
        ids = ids[segments[0].numpy() == 1]
    return [int(i) for i in ids if i]


class AttentionSummary:
    """The first dev example, read once; ``images(model)`` draws its maps for the model now."""

    def __init__(self, problem, data_dir: str, hparams) -> None:
        pattern = problem.filepattern(data_dir, "dev")
        read = problem.read_example_fn(EVAL, hparams)
        # The first row of the first batch (not ``unbatch``: TensorFlow crashes unbatching a
        # language model's empty [B, 0] inputs), unpacked (``pack_dataset`` off); of a packed
        # problem's row, its first example (segment 1).
        ds = make_dataset(
            pattern, EVAL, hparams, read_example=read, pack=False, split_targets=False
        )
        batch = next(iter(ds.take(1)))
        encoders = problem.get_encoders(data_dir)
        self.ids = {k: first_example(batch, k) for k in ("inputs", "targets")}
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
