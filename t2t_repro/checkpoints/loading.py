"""Loads a trained model: ``load_trained_model`` is the one way every tool and script builds
the model of a training output_dir (its ``hparams.json``, the problem's vocabulary sizes, the
overrides) and restores its weights; ``hparams.json`` is read here and nowhere else.

Restoring gives errors that say what does not fit.
Checkpoints are object-based ``tf.train.Checkpoint(model=...)`` files; only the model is read
(optimizer slots are ignored). A wrong path, a corrupt file, missing variables or shapes that
differ from the hparams are reported by name, with what to do about it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from t2t_repro import fileio, registry
from t2t_repro.checkpoints.errors import CheckpointError, retired_layout
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib import checks as hparams_checks
from t2t_repro.hparams_lib.build import RETIRED_HPARAMS, create_hparams, create_run_hparams

MODEL_KEY = "model"
HPARAMS_FILE = "hparams.json"
DEFAULT_HPARAMS_SET = "transformer_base"


def resolve_checkpoint(path: str) -> str:
    """A checkpoint prefix from a prefix or a directory (its latest checkpoint)."""
    if fileio.isdir(path):
        from t2t_repro.checkpoints.files import latest_checkpoint

        latest, note = latest_checkpoint(path)  # from the disk: a garbled state file is no loss
        if note:
            print(f"warning: {note}", file=sys.stderr, flush=True)
        if latest is None:
            raise CheckpointError(
                f"No checkpoint found in {path!r}. Train first (t2t-trainer --output_dir={path}) "
                "or pass --checkpoint_path=<dir>/ckpt-N."
            )
        return latest
    if not tf.io.gfile.exists(path + ".index"):
        raise CheckpointError(
            f"Checkpoint {path!r} does not exist (no {path}.index). Pass a checkpoint prefix "
            "such as train_dir/ckpt-1000 or a directory holding checkpoints."
        )
    return path


def checkpoint_reader(prefix: str):
    """``tf.train.load_checkpoint`` of a prefix, without its directory test (which TF's
    ram:// file system answers wrongly for a prefix)."""
    return tf.compat.v1.train.NewCheckpointReader(prefix)


def checkpoint_model_variables(path: str) -> dict[str, list[int]]:
    """{checkpoint key: shape} of every variable reachable from the ``model`` object.

    Walks the saved object graph rather than matching key prefixes: when the optimizer is
    saved too, TF names many model variables by their (shorter) optimizer path.
    """
    try:
        reader = checkpoint_reader(path)
        graph = trackable_object_graph_pb2.TrackableObjectGraph()
        graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
        shapes = reader.get_variable_to_shape_map()
    except (tf.errors.OpError, ValueError, IndexError) as e:
        raise CheckpointError(
            f"Checkpoint {path!r} is unreadable or corrupt: {_first_line(e)}"
        ) from None
    roots = [c.node_id for c in graph.nodes[0].children if c.local_name == MODEL_KEY]
    if not roots:
        raise CheckpointError(
            f"Checkpoint {path!r} holds no {MODEL_KEY!r} object: it was not "
            "written by t2t-trainer or t2t-avg-all."
        )
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
        raise CheckpointError(
            f"Checkpoint {prefix!r} is unreadable or corrupt: "
            f"{_first_line(e)}. Use another checkpoint (--checkpoint_path="
            "<dir>/ckpt-N) or move the broken one away."
        ) from None
    except (AssertionError, ValueError) as e:
        _quiet_restore_warnings()
        if why := retired_layout(str(e)):
            raise CheckpointError(f"Checkpoint {prefix!r}: {why}.") from None
        raise CheckpointError(
            f"Checkpoint {prefix!r} does not match the model: {_first_line(e)}. "
            f"The checkpoint holds {len(stored)} model variables; the model has "
            f"{len(model.weights)}. Use the same --hparams_set/--hparams as for training "
            "(they are saved in the training output_dir as hparams.json)."
        ) from None
    if len(stored) != len(model.weights):
        raise CheckpointError(
            f"Checkpoint {prefix!r} holds {len(stored)} model variables but the model has "
            f"{len(model.weights)} (the checkpoint is from a bigger model). Use the same "
            "--hparams_set/--hparams as for training (saved as hparams.json in its output_dir)."
        )
    return prefix


def _quiet_restore_warnings() -> None:
    """A failed restore leaves TensorFlow holding unrestored values, and it logs one warning
    per variable (hundreds) when they are freed, below the one error that matters. The tools
    stop on this error, so TensorFlow's Python warnings are silenced from here on."""
    tf.get_logger().setLevel("ERROR")


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "message", "") or error).strip() or type(error).__name__
    return text.splitlines()[0][:300]


def saved_hparams(output_dir: str) -> HParams | None:
    """The ``hparams.json`` a training run wrote in ``output_dir``; None when there is none."""
    path = os.path.join(output_dir, HPARAMS_FILE) if output_dir else ""
    if not path or not fileio.exists(path):
        return None
    with fileio.open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        hp = HParams.from_json(text)
    except HParamsError as e:
        raise HParamsError(f"{path}: {e}") from None
    hparams_checks.check_types(hp, path)
    for name in RETIRED_HPARAMS:
        if name in hp:
            hp.del_hparam(name)
    return hp


@dataclass
class TrainedModel:
    model: Any
    hparams: HParams
    problem: Any  # None when loaded without a problem (checkpoint averaging)
    checkpoint: str  # the restored checkpoint prefix ("" when not restored)


def load_trained_model(
    output_dir: str = "",
    *,
    checkpoint_path: str = "",
    problem_name: str = "",
    data_dir: str = "",
    hparams_set: str = "",
    hparams_overrides: str = "",
    model_name: str = "transformer",
    restore: bool = True,
) -> TrainedModel:
    """The model trained in ``output_dir``, restored from ``checkpoint_path`` (a prefix or a
    directory; default: the latest checkpoint in ``output_dir``).

    Hparams: the registered ``hparams_set`` (T2T's default ``transformer_base``), the problem's
    vocabulary sizes (read from ``data_dir``), then the saved ``hparams.json`` (so the model is
    exactly the trained one), then ``hparams_overrides``. Without ``problem_name`` the saved
    file is required. Names and overrides are checked before any data file is read.
    """
    problem = registry.problem(problem_name) if problem_name else None
    model_class = registry.model(model_name)
    saved = saved_hparams(output_dir)
    if saved is None and not problem_name:
        raise CheckpointError(
            f"{os.path.join(output_dir, HPARAMS_FILE)} is missing: the model "
            "directory must be a t2t-trainer output_dir."
        )
    if saved is None and not hparams_set:
        raise HParamsError(
            f"--hparams_set is required when --output_dir has no {HPARAMS_FILE}"
            f"{f' ({output_dir})' if output_dir else ''}."
        )
    if problem is None:
        hp = saved.parse(hparams_overrides)
    else:
        saved_json = saved.to_json() if saved is not None else None
        set_name = hparams_set or DEFAULT_HPARAMS_SET
        create_hparams(
            set_name,
            hparams_overrides,
            input_vocab_size=1,
            target_vocab_size=1,
            saved_json=saved_json,
        )  # Cheap check: no data file read yet.
        hp = create_run_hparams(problem, data_dir, set_name, hparams_overrides, saved_json)
    source = os.path.join(output_dir, HPARAMS_FILE) if saved else "hparams"
    hparams_checks.check_transformer_names(hp, source)
    hparams_checks.validate(hp, source)
    try:
        model = model_class(hp)
        if not restore:
            model.build()
    except (TypeError, AttributeError, KeyError, ValueError) as e:
        raise HParamsError(
            f"the hparams do not describe a buildable {model_name}: {type(e).__name__}: {e}"
        ) from None
    checkpoint = restore_model(model, checkpoint_path or output_dir) if restore else ""
    return TrainedModel(model, hp, problem, checkpoint)
