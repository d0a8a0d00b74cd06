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
(a negative padding): that stops here with one line naming the hparams.
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


def split_targets(ds: tf.data.Dataset, chunk_length: int, max_chunks: int) -> tf.data.Dataset:
    """Each batch of ``ds`` as up to ``max_chunks`` batches of ``chunk_length`` targets."""
    full = chunk_length * max_chunks

    def chunks(batch: dict) -> tf.data.Dataset:
        targets = batch["targets"]
        length = tf.shape(targets)[1]
        with tf.control_dependencies(
            [
                tf.debugging.assert_less_equal(
                    length,
                    full,
                    message=f"the targets of a batch are {TOO_LONG} ({chunk_length} x "
                    f"{max_chunks}): raise split_targets_max_chunks",
                )
            ]
        ):
            padded = tf.pad(targets, [[0, 0], [0, full - length]])
        sliced = tf.transpose(
            tf.reshape(padded, [tf.shape(targets)[0], max_chunks, chunk_length]), [1, 0, 2]
        )
        repeated = {
            k: tf.repeat(v[None], max_chunks, axis=0) for k, v in batch.items() if k != "targets"
        }
        return tf.data.Dataset.from_tensor_slices({**repeated, "targets": sliced})

    def has_targets(batch: dict) -> tf.Tensor:  # T2T's is_nonzero_chunk
        return tf.reduce_any(tf.not_equal(batch["targets"], 0))

    return ds.flat_map(chunks).filter(has_targets)
