"""T2T's swap of a ``<name>_rev`` problem's features (``data_generators/problem.py``,
``maybe_reverse_features``), for the project's ``_rev`` problems and a usr_dir's alike."""

from __future__ import annotations

# T2T's pairs of features a _rev swaps.
SWAPPED = (
    ("inputs", "targets"),
    ("inputs_segmentation", "targets_segmentation"),
    ("inputs_position", "targets_position"),
)


def reverse_features(feature_map: dict) -> dict:
    """Inputs and targets, and their segmentations and positions, swapped in place (also
    returned, for a map)."""
    for inputs_key, targets_key in SWAPPED:
        inputs = feature_map.pop(inputs_key, None)
        targets = feature_map.pop(targets_key, None)
        if inputs is not None:
            feature_map[targets_key] = inputs
        if targets is not None:
            feature_map[inputs_key] = targets
    return feature_map
