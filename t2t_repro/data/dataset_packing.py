"""T2T's on-the-fly packing (hparam ``pack_dataset=True``): several examples in one of ``length``.

tensor2tensor 1.15.7's ``Problem.dataset`` (``data_generators/problem.py``) calls
``generator_utils.pack_dataset(dataset, hparams.max_length, keys=["inputs", "targets"],
use_custom_ops=...)`` after the record shuffle. With ``use_custom_ops=False`` that is T2T's
``SequenceDatasetPacker(length, spacing=0, queue_size=10)`` called with ``cycle_length=10``
(``generator_utils.py``: ``_concurrent_pack``, ``_pack``, ``_standardize``, ``_scanning_pack``,
``_scan_step_fn``, ``_finalize``, ``_compute_auxiliary_structure``). This module gives the same
packed examples, written anew from that algorithm:

* The examples are cut into windows of ``int(length * 12.5)`` (T2T's ``length / 8 *
  queue_size * 10``), each packed on its own from an empty queue.
* In a window, an example with any packed sequence longer than ``length`` is dropped (not
  truncated: T2T's docstring says truncated, its ``chop_long_sequences=False`` drops).
* Queue of 10 bins, each with a free count per key; an example goes, first fit, into the bin
  nearest the queue's top where every one of its sequences fits (sequence ``k`` is appended
  after the bin's key-``k`` contents). When none fits, the top bin is emitted, emptied, moved
  to the bottom of the queue and takes the example. At the window's end the bins still holding
  something are emitted, top first (T2T pushes 10 full-length sentinel examples).
* Each output key ``k`` has ``k_segmentation`` and ``k_position`` (int32), as T2T computes
  them: a start mark at the row where each example's key-``k`` sequence starts, but only if
  that row is before the end of the example's furthest-reaching sequence; segment = running sum
  of the marks; position = row - running sum of (length of the previous segment id * mark);
  both 0 where the token is 0. So, T2T's quirks kept: an empty sequence beside a non-empty one
  marks a start that the next example's start in the same bin adds to (a segment id skipped and
  positions not restarted); an all-empty example lands in the top bin and can do the same;
  a token 0 inside a sequence gets segment and position 0. The contents keep the input dtype.
* Keys not packed are dropped; ``keys=None`` (or empty) packs every key. All packed keys must
  be 1-D with one dtype. A token -1 (T2T's sentinel) fails T2T's leak check, here too.

Order: T2T sets ``experimental_deterministic=False`` on its interleave of the windows and its
parallel map, so its order can change between runs; this module gives T2T's deterministic
order (windows in turn, each in its emission order), always.

T2T's ``use_custom_ops=True`` (the default of ``common_hparams.basic_params1``'s
``use_custom_ops`` hparam, so the one T2T takes with ``pack_dataset=True`` alone) is another
algorithm, ``_pack_with_custom_ops`` and its C++ op ``pack_sequences_ops.pack_sequences2``,
which the 1.15.7 wheel does not ship (T2T raises ``ModuleNotFoundError``). It differs: each
sequence cut to ``length`` (not dropped), batches of ``length`` examples packed each on its own
first fit over the batch's earlier rows, a sequence's length counted as its non-zero ids, int64
ids and exactly two keys, segments numbered by place in the row (no quirks above): that
meaning is ``t2t_repro/data/custom_op_packing.py``'s, which ``pack_dataset`` calls, as T2T's
does, after its checks of the keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from t2t_repro.data import custom_op_packing

QUEUE_SIZE = 10  # T2T's SequenceDatasetPacker(queue_size=10) in pack_dataset
# The pipeline's functions have no Python control flow on tensors: traced as written (AutoGraph's
# conversion was most of the cost of building the pipeline).
_plain = tf.autograph.experimental.do_not_convert


def window_size(length: int) -> int:
    """T2T's window of input examples packed together: ``int(length / 8 * 10 * 10)``."""
    return (25 * length) // 2  # the same integer: length / 8 * 100 = 12.5 * length, exactly


def pack_dataset(
    dataset: tf.data.Dataset,
    length: int,
    keys: Sequence[str] | None = None,
    use_custom_ops: bool = False,
) -> tf.data.Dataset:
    """T2T's ``generator_utils.pack_dataset(dataset, length, keys, use_custom_ops=False)``.

    ``dataset`` yields dicts of 1-D token tensors; the result yields dicts of ``[length]``
    tensors: each packed key (its dtype) with ``<key>_segmentation`` and ``<key>_position``
    (int32). Refuses what T2T refuses (missing key, rank, mixed dtypes, ``length`` < 1).
    ``use_custom_ops``: T2T's compiled op's packing instead (``custom_op_packing.py``).
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"pack_dataset: length must be a positive int, not {length!r}")
    spec = dataset.element_spec
    if not isinstance(spec, dict):
        raise TypeError(f"pack_dataset packs a dataset of dicts, not of {spec}")
    for key in keys or ():
        if key not in spec:
            raise ValueError(f"Key {key} not found in dataset. Available keys are {list(spec)}")
    keys = list(keys) if keys else list(spec)  # T2T: no keys (None or empty) packs them all
    for key in keys:
        # A 1-D slice of a ragged tensor (ragged_rank 0) is a plain tensor in the pipeline.
        dense = isinstance(spec[key], tf.TensorSpec) or (
            isinstance(spec[key], tf.RaggedTensorSpec) and spec[key].ragged_rank == 0
        )
        if not dense or not spec[key].shape.is_compatible_with([None]):
            raise ValueError(f"Tensors to be packed must be one-dimensional: {key} is {spec[key]}")
    if use_custom_ops:  # T2T's _pack_with_custom_ops, after the same checks
        return custom_op_packing.pack_with_custom_op_meaning(dataset, length, keys)
    dtypes = {spec[key].dtype for key in keys}
    if len(dtypes) > 1:
        raise ValueError(f"Inconsistent dtypes: {[spec[k].dtype.name for k in keys]}")
    dtype = dtypes.pop()

    sequences = dataset.map(_plain(lambda ex: tuple(ex[k] for k in keys)))
    size = window_size(length)
    # Windows packed side by side (as T2T's interleave, cycle_length=10), but each window's
    # bins kept together and the windows in turn: T2T's deterministic order, always.
    packed = sequences.window(size).interleave(
        _plain(lambda *parts: _pack_window(tf.data.Dataset.zip(parts), length, len(keys), dtype)),
        cycle_length=QUEUE_SIZE,
        block_length=size,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    return packed.map(_plain(lambda contents, marks: _finalize(contents, marks, keys, length)))


def _pack_window(window: tf.data.Dataset, length: int, n: int, dtype: tf.DType) -> tf.data.Dataset:
    """One window's packed bins, as (contents [length, n], start marks [length, n]) pairs."""
    window = window.filter(
        _plain(lambda *seqs: tf.reduce_all([tf.size(s) <= length for s in seqs]))
    )
    real = window.map(_plain(lambda *seqs: (seqs, tf.constant(False))))
    empty = tuple(tf.zeros([0], dtype) for _ in range(n))
    # One flush element per bin, each taking a whole empty bin or popping the top one (T2T's
    # eviction sentinels, without their -1 contents, which T2T never emits).
    flush = tf.data.Dataset.range(QUEUE_SIZE).map(_plain(lambda _: (empty, tf.constant(True))))
    state = (
        tf.fill([QUEUE_SIZE, n], tf.constant(length, tf.int32)),  # free rows per bin and key
        # Per bin: the contents [length, n], then the start marks [length, n] (a mark may count
        # 2 or more), in the token dtype so that one update writes both.
        tf.zeros([QUEUE_SIZE, length, 2 * n], dtype),
        tf.constant(0, tf.int32),  # the queue's top bin
    )

    def step(state, element):
        free, bins, top = state
        seqs, is_flush = element
        sizes = tf.stack([tf.size(s, out_type=tf.int32) for s in seqs])
        sizes = tf.where(is_flush, tf.fill([n], tf.constant(length, tf.int32)), sizes)
        fits = tf.reduce_all(free >= sizes[tf.newaxis, :], axis=1)
        any_fits = tf.reduce_any(fits)
        rank = (tf.range(QUEUE_SIZE) - top) % QUEUE_SIZE  # place in the queue, from the top
        first_fit = (tf.reduce_min(tf.where(fits, rank, QUEUE_SIZE)) + top) % QUEUE_SIZE
        # Nothing fits: emit the top bin, and put the example in it, emptied, at the bottom.
        out = (tf.logical_not(any_fits), bins[top])
        bin_ = tf.where(any_fits, first_fit, top)
        old = tf.where(any_fits, bins[bin_], tf.zeros_like(bins[bin_]))
        old_free = tf.where(any_fits, free[bin_], tf.fill([n], length))
        top = tf.where(any_fits, top, (top + 1) % QUEUE_SIZE)

        start = length - old_free  # [n]: each key's first free row in the bin
        reach = tf.reduce_max(start + sizes)
        # A start is marked unless it is at or after where the example's longest part ends.
        marked = tf.logical_and(start < reach, tf.logical_not(is_flush))
        marks = tf.one_hot(start, length, axis=0, dtype=dtype) * tf.cast(marked, dtype)
        # A sequence padded to length and rolled by its start: its rows, zeros elsewhere (it
        # fits, so what wraps round is padding).
        rows = [
            tf.roll(tf.pad(s, [[0, length - tf.size(s)]]), start[i], axis=0)
            for i, s in enumerate(seqs)
        ]
        new = old + tf.concat([tf.stack(rows, axis=1), marks], axis=1)
        bins = tf.tensor_scatter_nd_update(bins, [[bin_]], new[tf.newaxis])
        free = tf.tensor_scatter_nd_update(free, [[bin_]], (old_free - sizes)[tf.newaxis])
        return (free, bins, top), out

    packed = real.concatenate(flush).scan(state, _plain(step))
    return packed.filter(_plain(lambda emitted, _: emitted)).map(
        _plain(lambda _, b: (b[:, :n], tf.cast(b[:, n:], tf.int32)))
    )


def _finalize(contents: tf.Tensor, marks: tf.Tensor, keys: list[str], length: int) -> dict:
    """T2T's segment and position ids of a packed bin, and its dict of keys."""
    check = tf.debugging.assert_none_equal(
        contents, tf.constant(-1, contents.dtype), message="token -1 (T2T's packing sentinel)"
    )
    with tf.control_dependencies([check]):
        contents = tf.identity(contents)
    segment = tf.cumsum(marks, axis=0)
    kept = tf.cast(tf.not_equal(contents, 0), tf.int32)
    rows = tf.range(length, dtype=tf.int32)
    out = {}
    for i, key in enumerate(keys):
        seg, mark = segment[:, i], marks[:, i]
        # Rows per segment id (ids may skip: then a start finds 0 rows before it).
        counts = tf.math.segment_sum(tf.ones([length], tf.int32), seg)
        before = tf.gather(counts, tf.maximum(seg - 1, 0)) * mark
        position = rows - tf.cumsum(before)
        out[key] = tf.ensure_shape(contents[:, i], [length])
        out[key + "_segmentation"] = tf.ensure_shape(seg * kept[:, i], [length])
        out[key + "_position"] = tf.ensure_shape(position * kept[:, i], [length])
    return out
