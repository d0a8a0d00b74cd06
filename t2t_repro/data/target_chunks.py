"""T2T's ``split_targets_chunk_length``: every batch's targets cut into chunks, each chunk a
batch of its own (``utils/data_reader.py``, ``input_fn``, after the batching and
``batch_shuffle_size``; in training and evaluation alike).

A batch's targets are padded with 0 to ``chunk_length * max_chunks`` positions and cut into
``max_chunks`` slices of ``chunk_length``; slice ``n`` becomes a batch of the same rows with
the other features repeated, and a slice whose targets are all 0 is dropped. Each chunk is
then trained on as targets of its own (its first token after the shift is 0, as any
target's). T2T also adds a ``chunk_number`` feature, which only its recurrent-memory models
read (``models/transformer.py``, ``body``); this project's transformer has none, so it is not
added. T2T cannot pad a batch whose targets are longer than ``chunk_length * max_chunks``
(a negative padding): that stops here with one line naming the hparams (the length counted
without a padded bucket's extra PAD columns, which T2T's batches do not have).

On several replicas a step is one chunk of every replica's rows, as T2T's step is one chunk
of the worker's whole batch split over its shards (``split_targets``, ``replicas``).
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.hparam import HParamsError

TOO_LONG = "longer than split_targets_chunk_length x split_targets_max_chunks"


def check(hparams, is_train: bool, packed: bool) -> None:
    """One line for what T2T's chunking cannot do (raised before any batch is read)."""
    if not hparams.get("split_targets_chunk_length", 0):
        return
    if packed:  # T2T would repeat the targets' segmentation unchunked beside chunked targets
        raise HParamsError(
            "split_targets_chunk_length with packed examples (pack_dataset or a *_packed "
            "problem): T2T chunks the targets but not their segmentation and positions; "
            "train it on unpacked data."
        )
    if is_train and hparams.get("split_targets_strided_training", False):
        raise HParamsError(  # T2T's ValueError where the batch size is not static (off TPU)
            "split_targets_strided_training needs a batch size known before the data is "
            "read (T2T implements it on TPU only); set it to False."
        )


def real_length(ids: tf.Tensor) -> tf.Tensor:
    """The batch's length without its trailing all-PAD columns (a padded bucket's extra)."""
    positions = tf.range(1, tf.shape(ids)[1] + 1)
    return tf.maximum(tf.reduce_max(tf.where(tf.not_equal(ids, 0), positions[None], 0)), 0)


def _chunked(batch: dict, chunk_length: int, max_chunks: int) -> dict:
    """The batch with ``targets`` [max_chunks, B, chunk_length] and the others repeated."""
    full = chunk_length * max_chunks
    targets = batch["targets"]
    length = real_length(targets)
    check = tf.debugging.assert_less_equal(
        length,
        full,
        message=f"the targets of a batch are {TOO_LONG} ({chunk_length} x {max_chunks}): "
        "raise split_targets_max_chunks",
    )
    with tf.control_dependencies([check]):
        kept = targets[:, : tf.minimum(tf.shape(targets)[1], full)]
    padded = tf.pad(kept, [[0, 0], [0, full - tf.shape(kept)[1]]])
    rows = tf.shape(targets)[0]
    sliced = tf.transpose(tf.reshape(padded, [rows, max_chunks, chunk_length]), [1, 0, 2])
    repeated = {
        k: tf.repeat(v[None], max_chunks, axis=0) for k, v in batch.items() if k != "targets"
    }
    return {**repeated, "targets": sliced}


def split_targets(
    ds: tf.data.Dataset, chunk_length: int, max_chunks: int, replicas: int = 1
) -> tf.data.Dataset:
    """Each batch of ``ds`` as up to ``max_chunks`` batches of ``chunk_length`` targets.

    ``replicas``: how many consecutive batches of this pipeline make one step (a worker's
    replicas take one each). T2T chunks the worker's whole batch, so that a step is one chunk
    of its rows: here ``replicas`` batches are chunked side by side, chunk 0 of each, then
    chunk 1 of each... A chunk all PAD in its own batch is dropped there (T2T's
    ``is_nonzero_chunk``, which sees the whole worker batch, would keep it as a shard without
    targets), and the next batch's chunks take its place: tf.data's interleave, with no
    iterator state that a checkpoint of the input could not save."""

    def chunks(batch: dict) -> tf.data.Dataset:
        chunked = tf.data.Dataset.from_tensor_slices(_chunked(batch, chunk_length, max_chunks))
        return chunked.filter(lambda chunk: tf.reduce_any(tf.not_equal(chunk["targets"], 0)))

    return ds.interleave(chunks, cycle_length=replicas, block_length=1)
