"""How a T2T problem reads its records, as T2T 1.15.7 reads them
(``tensor2tensor/data_generators/problem.py``: ``example_reading_spec``, ``decode_example``,
``preprocess_example``, ``preprocess_example_common``, ``dataset``), for a usr_dir that
overrides one of these hooks.

T2T's ``dataset`` maps every record through ``decode_example`` (the spec's fields parsed,
sparse ones made dense with 0 or b"", plus ``batch_prediction_key``), then through
``preprocess_example(example, mode, hparams)``, whose default truncates to
``max_input_seq_length``/``max_target_seq_length``; this happens before the record shuffle and
``data_reader.input_fn``'s length filter and bucketing, on the EOS-terminated ids datagen wrote
(so a truncation may cut EOS, as in T2T). Here the same two calls are the problem's
``read_example_fn``, which the input pipeline maps at that place (``data/input_pipeline.py``);
T2T's transformer reads only ``inputs`` and ``targets``, and the pipeline drops the rest.

What cannot be honoured is refused in one line when the problem is loaded: a spec's
``data_items_to_decoders`` (tf.contrib.slim's decoders, which TensorFlow 2 does not have) and
fields of kinds other than ``VarLenFeature``/``FixedLenFeature``.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from t2t_repro.data.input_pipeline import preprocess_common

# T2T's decode_example adds it for Cloud ML Engine's batch prediction (problem.py).
BATCH_PREDICTION_KEY = "batch_prediction_key"
READING_HOOKS = ("example_reading_spec", "decode_example", "preprocess_example")
_KINDS = (tf.io.VarLenFeature, tf.io.FixedLenFeature)


def default_reading_spec(has_inputs: bool = True) -> tuple[dict, None]:
    """T2T's ``example_reading_spec``: int64 ``targets``, and ``inputs`` unless the problem has
    none (``Problem``'s always reads both; ``Text2TextProblem``'s reads ``inputs`` only when
    ``has_inputs``: a language model's records hold targets only)."""
    fields = {"targets": tf.io.VarLenFeature(tf.int64)}
    if has_inputs:
        fields["inputs"] = tf.io.VarLenFeature(tf.int64)
    return fields, None


def checked_spec(problem: Any, where: str, error: type) -> dict:
    """The problem's ``data_fields``, or one line saying what this project cannot read."""
    spec = problem.example_reading_spec()
    if not isinstance(spec, tuple) or len(spec) != 2 or not isinstance(spec[0], dict):
        raise error(
            f"{where}: example_reading_spec() returned {type(spec).__name__}; as in T2T it must "
            "return (data_fields dict, data_items_to_decoders or None)."
        )
    fields, decoders = spec
    if decoders is not None:
        raise error(
            f"{where}: example_reading_spec() gives data_items_to_decoders (tf.contrib.slim "
            "decoders, which TensorFlow 2 lacks); return None there: every field is then read "
            "as a tensor, as T2T's default does."
        )
    for name, kind in fields.items():
        if not isinstance(kind, _KINDS):
            raise error(
                f"{where}: example_reading_spec() reads {name!r} as {type(kind).__name__}; only "
                "tf.io.VarLenFeature and tf.io.FixedLenFeature fields are read here."
            )
    return dict(fields)


def decode_example(fields: dict, serialized: tf.Tensor) -> dict:
    """T2T's ``decode_example`` with ``data_items_to_decoders=None``: each field parsed, a
    sparse one made dense (0, or b"" for strings), ``batch_prediction_key`` added."""
    fields = {**fields, BATCH_PREDICTION_KEY: tf.io.FixedLenFeature([1], tf.int64, 0)}
    parsed = tf.io.parse_single_example(serialized, fields)
    example = {}
    for name in sorted(parsed):
        value = parsed[name]
        if isinstance(value, tf.SparseTensor):
            default = b"" if value.dtype == tf.string else 0
            value = tf.sparse.to_dense(value, default_value=default)
        example[name] = value
    return example


def preprocess_example_common(example: dict, mode: str, hparams: Any) -> dict:
    """T2T's ``preprocess_example_common``: the truncations and ``prepend_mode``, as the input
    pipeline's own reading (``data/input_pipeline.py``, ``preprocess_common``); in "infer"
    mode ``prepend_mode`` gives ``partial_targets`` (the inputs and a 0) instead, as T2T's.
    Its ``split_to_length`` chunks are cut by the input pipeline after every problem's
    reading (``split_to_length``: the same examples, whichever reading ran)."""
    return preprocess_common(example, hparams, infer=mode == "infer")


def read_example_fn(problem: Any, mode: str, hparams: Any):
    """``record -> problem.preprocess_example(problem.decode_example(record), mode, hparams)``:
    T2T's ``dataset`` for one record (its result may be a dataset of examples). A problem
    without inputs (a language model) may give no ``inputs``, as T2T's spec reads none: it
    gets the empty ``inputs`` the pipeline's own parsing gives its records (which the model,
    the decoder alone, does not read), so it is batched as the project's language models are."""
    no_inputs = not problem.has_inputs

    def read(serialized: tf.Tensor):
        example = problem.preprocess_example(problem.decode_example(serialized), mode, hparams)
        if not no_inputs:
            return example
        if isinstance(example, tf.data.Dataset):
            return example.map(_with_empty_inputs)
        return _with_empty_inputs(example)

    return read


def then_map(read, fn):
    """``read`` followed by ``fn`` on each of its examples (a dict, or each of a dataset's), as
    T2T's ``dataset`` maps ``maybe_reverse_and_copy`` after the reading (``problem.py``)."""

    def read_then_map(serialized: tf.Tensor):
        example = read(serialized)
        if isinstance(example, tf.data.Dataset):
            return example.map(lambda ex: fn(dict(ex)))
        return fn(dict(example))

    return read_then_map


def _with_empty_inputs(example: dict) -> dict:
    if "inputs" in example:
        return example
    return {**example, "inputs": tf.zeros([0], tf.int64)}
