"""The one-line errors that stop a training run: a diverged loss, a corrupt shard, an id out of
the model's range (a resume on another number of workers: ``resume_layout.py``). Each says what
was kept and how to go on."""

from __future__ import annotations

import re
from typing import NoReturn

import tensorflow as tf

from t2t_repro.data.input_pipeline import list_shards
from t2t_repro.data.records import find_corrupt_record
from t2t_repro.data.target_chunks import TOO_LONG
from t2t_repro.data.text_files import DataError
from t2t_repro.training.loop.train_step import DIVERGED_LOSS
from t2t_repro.training.run_setup import TrainingError


def diverged_error(stats: dict, latest: str | None) -> TrainingError:
    """``stats``: the train loop's metrics (``first_nonfinite``, ``bad_loss``)."""
    step, loss = stats["first_nonfinite"], stats["bad_loss"]
    what = (
        "became NaN/Inf"
        if loss != loss or abs(loss) == float("inf")
        else f"diverged ({loss:.3g} > {DIVERGED_LOSS:g} per token)"
    )
    return TrainingError(
        f"Loss {what} at step {step}. Training stopped without saving this state; the "
        f"last good checkpoint is {latest or '(none yet)'}. To go on from it with a lower "
        "learning rate, rerun in this --output_dir with, e.g., "
        "--hparams=learning_rate_constant=<lower> (read over its saved hparams.json, as "
        "T2T reads them); or check the data."
    )


def corrupt_data_error(problem, data_dir: str, split: str, latest: str | None) -> DataError:
    pattern = problem.filepattern(data_dir, split)
    where = find_corrupt_record(list_shards(pattern))
    return DataError(
        f"Corrupt {split} data: {where or 'a shard matching ' + pattern}. Delete that "
        "shard and rerun t2t-datagen to rewrite it (finished shards are kept), then rerun "
        f"this command to resume from {latest or 'the start'}."
    )


# TensorFlow's gather on CPU: "indices[3,7] = 8195 is not in [0, 8192)".
_OUT_OF_RANGE = re.compile(r"indices\[[^\]]*\] = (-?\d+) is not in \[0, (\d+)\)")


def raise_data_stop(
    error: Exception, problem, data_dir: str, split: str, latest: str | None
) -> NoReturn:
    """Raises the one-line error for what stopped a loop on its data: a corrupt shard, or an
    id the model has no row for (shards written with another vocabulary, or a class label past
    the problem's classes); any other error as it is."""
    if isinstance(error, tf.errors.DataLossError):
        raise corrupt_data_error(problem, data_dir, split, latest) from None
    message = error.message if isinstance(error, tf.errors.InvalidArgumentError) else ""
    if TOO_LONG in message:  # T2T's chunking cannot pad them (data/target_chunks.py)
        said = re.search(r"\[(the targets of a batch [^\]]*)\]", message)
        raise DataError(f"The {split} data: {said.group(1) if said else TOO_LONG}.") from None
    found = _OUT_OF_RANGE.search(message)
    if not found:
        raise error
    value, size = found.groups()
    raise DataError(
        f"The {split} data holds id {value}, which this model has no row for (its "
        f"vocabulary or classes: {size}): the shards in {data_dir} were written with another "
        "vocabulary or more classes than the problem has now; rerun t2t-datagen into a new "
        f"--data_dir (nothing was saved past {latest or 'the start'})."
    ) from None
