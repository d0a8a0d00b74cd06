"""Restores a model's weights from a checkpoint with errors that say what does not fit.

Used by every tool that reads a trained model (decoder, averaging, export, attention plots).
Checkpoints are object-based ``tf.train.Checkpoint(model=...)`` files; only the model is read
(optimizer slots are ignored). A wrong path, a corrupt file, missing variables or shapes that
differ from the hparams are reported by name, with what to do about it.
"""

from __future__ import annotations

import os
import sys

import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

MODEL_KEY = "model"


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable or does not match the model."""


def resolve_checkpoint(path: str) -> str:
    """A checkpoint prefix from a prefix or a directory (its latest checkpoint)."""
    if os.path.isdir(path):
        from t2t_repro.checkpoint_files import latest_checkpoint

        latest, note = latest_checkpoint(path)  # from the disk: a garbled state file is no loss
        if note:
            print(f"warning: {note}", file=sys.stderr, flush=True)
        if latest is None:
            raise CheckpointError(
                f"No checkpoint found in {path!r}. Train first (t2t-trainer --output_dir={path}) "
                "or pass --checkpoint_path=<dir>/ckpt-N.")
        return latest
    if not tf.io.gfile.exists(path + ".index"):
        raise CheckpointError(
            f"Checkpoint {path!r} does not exist (no {path}.index). Pass a checkpoint prefix "
            "such as train_dir/ckpt-1000 or a directory holding checkpoints.")
    return path


def checkpoint_model_variables(path: str) -> dict[str, list[int]]:
    """{checkpoint key: shape} of every variable reachable from the ``model`` object.

    Walks the saved object graph rather than matching key prefixes: when the optimizer is
    saved too, TF names many model variables by their (shorter) optimizer path.
    """
    try:
        reader = tf.train.load_checkpoint(path)
        graph = trackable_object_graph_pb2.TrackableObjectGraph()
        graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
        shapes = reader.get_variable_to_shape_map()
    except (tf.errors.OpError, ValueError, IndexError) as e:
        raise CheckpointError(f"Checkpoint {path!r} is unreadable or corrupt: "
                              f"{_first_line(e)}") from None
    roots = [c.node_id for c in graph.nodes[0].children if c.local_name == MODEL_KEY]
    if not roots:
        raise CheckpointError(f"Checkpoint {path!r} holds no {MODEL_KEY!r} object: it was not "
                              "written by t2t-trainer or t2t-avg-all.")
    seen, todo, found = set(), list(roots), {}
    while todo:
        node_id = todo.pop()
        if node_id in seen:
            continue
        seen.add(node_id)
        node = graph.nodes[node_id]
        for attribute in node.attributes:
            if attribute.name == "VARIABLE_VALUE":
                found[attribute.checkpoint_key] = shapes.get(attribute.checkpoint_key)
        todo.extend(c.node_id for c in node.children)
    return found


def restore_model(model, path: str) -> str:
    """Loads ``model``'s weights from ``path`` (prefix or directory); returns the prefix."""
    prefix = resolve_checkpoint(path)
    stored = checkpoint_model_variables(prefix)
    if not model.built:
        model.build()
    try:
        status = tf.train.Checkpoint(**{MODEL_KEY: model}).read(prefix)
        status.expect_partial()
        status.assert_existing_objects_matched()
    except (tf.errors.OpError, IndexError) as e:
        _quiet_restore_warnings()
        raise CheckpointError(f"Checkpoint {prefix!r} is unreadable or corrupt: "
                              f"{_first_line(e)}. Use another checkpoint (--checkpoint_path="
                              "<dir>/ckpt-N) or move the broken one away.") from None
    except (AssertionError, ValueError) as e:
        _quiet_restore_warnings()
        raise CheckpointError(
            f"Checkpoint {prefix!r} does not match the model: {_first_line(e)}. "
            f"The checkpoint holds {len(stored)} model variables; the model has "
            f"{len(model.weights)}. Use the same --hparams_set/--hparams as for training "
            "(they are saved in the training output_dir as hparams.json).") from None
    if len(stored) != len(model.weights):
        raise CheckpointError(
            f"Checkpoint {prefix!r} holds {len(stored)} model variables but the model has "
            f"{len(model.weights)} (the checkpoint is from a bigger model). Use the same "
            "--hparams_set/--hparams as for training (saved as hparams.json in its output_dir).")
    return prefix


def _quiet_restore_warnings() -> None:
    """A failed restore leaves TensorFlow holding unrestored values, and it logs one warning
    per variable (hundreds) when they are freed, below the one error that matters. The tools
    stop on this error, so TensorFlow's Python warnings are silenced from here on."""
    tf.get_logger().setLevel("ERROR")


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "message", "") or error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
