"""T2T's swap of a ``<name>_rev`` problem's features (``data_generators/problem.py``,
``maybe_reverse_features``), for the project's ``_rev`` problems and a usr_dir's alike, and
the copy of a ``<name>_copy``'s (``maybe_copy_features``)."""

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


def copy_features(feature_map: dict) -> dict:
    """T2T's ``maybe_copy_features`` of a _copy: the inputs (and their segmentation and
    position, where the targets have none) as the targets, in place (also returned)."""
    feature_map["targets"] = feature_map["inputs"]
    for inputs_key, targets_key in SWAPPED[1:]:
        if inputs_key in feature_map and targets_key not in feature_map:
            feature_map[targets_key] = feature_map[inputs_key]
    return feature_map
