"""T2T 1.15.7's default on-the-fly packing: hparams ``pack_dataset=True`` with
``use_custom_ops=True`` (``basic_params1``), i.e. ``generator_utils._pack_with_custom_ops`` and
its compiled op ``pack_sequences2`` (``tensor2tensor/data_generators/ops/pack_sequences_ops.cc``,
``PackSequences2``, as of tag v1.15.7). The 1.15.7 wheel does not ship the op; this is its
algorithm, so the packed examples are T2T's, in T2T's order.

What T2T does: cut each of the two keys to ``length`` ids, batch ``length`` examples (zero
padded), pack each batch on its own and emit its packed rows one by one. In a batch, each
example goes, in order, to the first row (among the newest 1000) where both of its sequences
still fit in ``length`` ids, else opens a new row. Quirks kept: a sequence's length is its count
of non-zero ids but its first that-many ids are copied (a zero inside moves the count, so ids are
dropped from the end and zeros may be copied); an example numbers its segment ``i + 1`` by its
place ``i`` in the row, also in a key where it is empty; rows are exactly ``length`` long.
Packed ids are int64, segmentation and positions int32. T2T's op takes int64 ids only (in T2T
``Problem.dataset`` packs the records' int64 ids; ``cast_ints_to_int32`` comes after it, in
``input_fn``). Here int32 ids are packed too, to the same values, and stay int32: what T2T's
later cast gives, for a pipeline that casts before packing. Other dtypes are refused, as T2T's
op refuses them (TypeError).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

# PackSequences2 looks for a fitting row among the newest this-many rows only.
_WINDOW = 1000


def _pack_batch(first: np.ndarray, second: np.ndarray, length: int) -> tuple[np.ndarray, ...]:
    """One padded batch packed as ``PackSequences2(first, second, length, length)`` does."""
    length = int(length)
    batch = (first, second)
    n = first.shape[0]
    lens = [np.count_nonzero(x[:, :length], axis=1) for x in batch]
    used = np.zeros((2, n), dtype=np.int64)  # ids in each row so far, per key
    rows: list[list[int]] = []  # the examples of each row, in order
    for i in range(n):
        lo, hi = max(0, len(rows) - _WINDOW), len(rows)
        fits = np.flatnonzero(
            (used[0, lo:hi] + lens[0][i] <= length) & (used[1, lo:hi] + lens[1][i] <= length)
        )
        row = lo + int(fits[0]) if fits.size else hi
        if row == hi:
            rows.append([])
        rows[row].append(i)
        used[:, row] += (lens[0][i], lens[1][i])
    out: list[np.ndarray] = []
    for x, x_lens in zip(batch, lens, strict=True):
        packed = np.zeros((len(rows), length), dtype=x.dtype)
        segmentation = np.zeros((len(rows), length), dtype=np.int32)
        position = np.zeros((len(rows), length), dtype=np.int32)
        for r, members in enumerate(rows):
            at = 0
            for place, i in enumerate(members):
                k = int(x_lens[i])
                packed[r, at : at + k] = x[i, :k]
                segmentation[r, at : at + k] = place + 1
                position[r, at : at + k] = np.arange(k, dtype=np.int32)
                at += k
        out += [packed, segmentation, position]
    return tuple(out)


def _check(dataset: tf.data.Dataset, keys: list[str]) -> None:
    """T2T's refusals, with its exception classes (``pack_dataset``, the unpacking of two keys,
    the op's int64 inputs, int32 excepted: see the module)."""
    spec = dataset.element_spec
    for k in keys:
        if k not in spec:
            raise ValueError(f"Key {k} not found in dataset.  Available keys are {list(spec)}")
        if not spec[k].shape.is_compatible_with(tf.TensorShape([None])):
            raise ValueError("Tensors to be packed must be one-dimensional.")
    if len(keys) != 2:
        raise ValueError(f"T2T's pack_sequences2 packs exactly two keys, not {keys}")
    for k in keys:
        if spec[k].dtype not in (tf.int64, tf.int32):
            raise TypeError(f"pack_sequences2 takes int64 ids; {k} is {spec[k].dtype.name}")


def pack_with_custom_op_meaning(
    dataset: tf.data.Dataset, length: int, keys: Sequence[str]
) -> tf.data.Dataset:
    """T2T's ``pack_dataset(dataset, length, keys, use_custom_ops=True)``: the two ``keys`` of
    each example packed into rows of ``length`` ids, with ``<key>_segmentation`` and
    ``<key>_position``; other keys are dropped. Deterministic."""
    keys = list(keys)
    _check(dataset, keys)
    first, second = keys
    dataset = dataset.map(lambda x: {k: x[k][:length] for k in keys})
    # batches of length examples: at least one full row when the sequences are non-empty (T2T)
    dataset = dataset.padded_batch(length, padded_shapes={k: [-1] for k in keys})

    def rows(batch: dict) -> tf.data.Dataset:
        out = tf.numpy_function(
            _pack_batch,
            [batch[first], batch[second], length],
            [t for k in keys for t in (batch[k].dtype, tf.int32, tf.int32)],
            stateful=False,
        )
        names = [k + suffix for k in keys for suffix in ("", "_segmentation", "_position")]
        for t in out:
            t.set_shape([None, length])
        return tf.data.Dataset.from_tensor_slices(dict(zip(names, out, strict=True)))

    return dataset.flat_map(rows)
