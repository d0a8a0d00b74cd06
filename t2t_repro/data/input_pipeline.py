"""tf.data input pipeline with T2T's length-bucketed token batches
(``tensor2tensor/utils/data_reader.py``, ``input_fn``).

``hparams.batch_size`` is a token budget per replica (sentences x the bucket's upper length
of max(len(inputs), len(targets))); under ``tf.distribute`` each replica's pipeline comes
from ``distribute_datasets_from_function`` with its own ``InputContext``, so the global batch
is the sum over replicas, as with T2T's datashards. Training shuffles files, records (1024)
and batches (``batch_shuffle_size``), repeats, and drops examples longer than ``max_length``;
evaluation does none of that.

A problem may read its records itself (``Problem.read_example_fn``: T2T's ``decode_example``
and ``preprocess_example``, ``tensor2tensor/data_generators/problem.py``, ``dataset``): its
per-example map then replaces the parsing and truncation here, at the same place (before
the record shuffle, the repeat and the length filter, as T2T's ``dataset`` runs it before
``data_reader.input_fn``), and the features the model does not read are dropped after it.
Without one there is no extra map.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from t2t_repro.data import records, target_chunks
from t2t_repro.data.bucketing import batching_scheme, padded_batching_scheme
from t2t_repro.data.text_files import DataError
from t2t_repro.hparam import HParamsError

TRAIN, EVAL = "train", "eval"
# This module's map, filter and key functions have no tensor control flow, so tf.data traces
# them as written: autograph's rewrite of their source cost each process's first pipeline
# ~0.1 s. (A problem's own read_example keeps autograph, as T2T's dataset maps had it.)
_as_written = tf.autograph.experimental.do_not_convert
RECORD_SHUFFLE_BUFFER = 1024
FEATURES = ("inputs", "targets")
# A packed example's (T2T's packed datasets: ``generator_utils.pack_examples``/``pack_dataset``):
# which example each position is of, and its position there (the model reads them).
PACKED_FEATURES = tuple(f"{k}_{kind}" for k in FEATURES for kind in ("segmentation", "position"))


def list_shards(filepattern: str) -> list[str]:
    """Finished shards matching the pattern (``*.tmp`` files of interrupted writes excluded)."""
    files = sorted(f for f in tf.io.gfile.glob(filepattern) if not f.endswith(".tmp"))
    if not files:
        raise DataError(
            f"No data files match {filepattern!r}. Generate them with "
            "t2t-datagen --problem=<problem> --data_dir=<data_dir> (or pass "
            "--generate_data to t2t-trainer)."
        )
    return files


@_as_written
def example_length(example: dict) -> tf.Tensor:
    """max(len(inputs), len(targets)) including EOS: what a batch's token budget counts."""
    return tf.maximum(tf.size(example["inputs"]), tf.size(example["targets"]))


def _read_by_problem(ds, read_example, deterministic: bool) -> tf.data.Dataset:
    """``read_example`` over the serialized records (a map, or a flat map where it returns a
    dataset of examples, as T2T's ``preprocess`` allows); then ``FEATURES`` as int32 vectors
    (T2T's ``cast_ints_to_int32``), and the packed ones it gives (``PACKED_FEATURES``); the
    other features dropped (T2T's transformer reads only these). One line when the examples
    lack a feature or give it another kind."""
    ds = ds.map(read_example, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
    if isinstance(ds.element_spec, tf.data.DatasetSpec):
        ds = ds.flat_map(lambda examples: examples)
    spec = ds.element_spec
    for name in FEATURES:
        found = spec.get(name) if isinstance(spec, dict) else None
        vector = isinstance(found, tf.TensorSpec) and found.shape.rank == 1
        if not vector or not found.dtype.is_integer:
            what = "no such feature" if found is None else f"{found}"
            raise DataError(
                f"the problem's examples (its example reading spec and preprocess_example) give "
                f"{name!r} as {what}; the model reads integer vectors 'inputs' and 'targets'."
            )
    kept = FEATURES + tuple(name for name in PACKED_FEATURES if name in spec)
    return ds.map(
        _as_written(lambda ex: {name: tf.cast(ex[name], tf.int32) for name in kept}),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic,
    )


def parse_and_truncate(hparams, packed: bool = False) -> Callable[[tf.Tensor], dict]:
    """This module's own reading of a serialized record (parsing, then T2T's
    ``max_input_seq_length``/``max_target_seq_length`` truncation and ``prepend_mode``,
    ``preprocess_common``): ``make_dataset``'s map without a problem's own reading, and the
    start of one that adds a step after it. ``packed``: the records are packed (a
    ``*_packed`` problem's), with ``PACKED_FEATURES``."""
    if packed and prepends_inputs(hparams):
        raise DataError(
            f"prepend_mode={hparams.prepend_mode!r} with packed records (a *_packed problem): "
            "their inputs hold several examples a row, which T2T would prepend to targets of "
            "other examples; use the unpacked problem (pack_dataset packs after prepending)."
        )
    names = FEATURES + PACKED_FEATURES if packed else FEATURES
    parse, truncate = records.parse_example_fn(names), _truncate(hparams)
    return _as_written(lambda record: truncate(parse(record)))


def split_to_length(example: dict, length: int) -> tf.data.Dataset:
    """T2T's ``split_to_length`` (``data_generators/problem.py``, ``preprocess_example_common``):
    the example's ``inputs`` and ``targets`` cut into examples of ``length`` ids, one a row of
    their reshape, the other features dropped. T2T's reshape fails on a length that does not
    divide an example, and on inputs and targets of different row counts: so do these, saying
    so. Empty ``inputs`` (a language model's here; T2T's have none) stay empty, one a chunk."""
    targets = _rows_of(example["targets"], length, "targets")
    chunks = {"targets": targets}
    if "inputs" in example:
        inputs = example["inputs"]
        chunks["inputs"] = tf.cond(
            tf.size(inputs) > 0,
            lambda: _rows_of(inputs, length, "inputs"),
            lambda: tf.zeros([tf.shape(targets)[0], 0], inputs.dtype),
        )
        tf.debugging.assert_equal(
            tf.shape(chunks["inputs"])[0],
            tf.shape(targets)[0],
            message=f"split_to_length={length}: the inputs and targets give different numbers "
            "of chunks (T2T fails there too, in its reshape): use 0 or a length that fits",
        )
    return tf.data.Dataset.from_tensor_slices(chunks)


def _rows_of(ids: tf.Tensor, length: int, name: str) -> tf.Tensor:
    with tf.control_dependencies(
        [
            tf.debugging.assert_equal(
                tf.math.floormod(tf.size(ids), length),
                0,
                message=f"split_to_length={length} does not divide the length of an example's "
                f"{name} (T2T fails there too, in its reshape): use 0 or a length that fits",
            )
        ]
    ):
        return tf.reshape(ids, [-1, length])


def prepends_inputs(hparams) -> bool:
    """T2T's ``prepend_mode`` other than "none" (its transformer treats every such value
    alike: the two modes differ only in T2T's attention_lm models)."""
    return hparams.get("prepend_mode", "none") != "none"


def preprocess_common(example: dict, hparams, infer: bool = False) -> dict:
    """T2T's ``preprocess_example_common`` (``data_generators/problem.py``) but for
    ``split_to_length`` (``make_dataset`` cuts after every reading): the inputs cut to
    ``max_input_seq_length``; with ``prepend_mode`` the targets become inputs, a 0 (PAD) and
    targets (``infer``: ``partial_targets`` are the inputs and a 0, as T2T's PREDICT mode);
    then the targets cut to ``max_target_seq_length``. ``example`` is changed in place, as
    T2T's is."""
    max_inputs = hparams.get("max_input_seq_length", 0) or 0
    max_targets = hparams.get("max_target_seq_length", 0) or 0
    if "inputs" in example and max_inputs > 0:
        example["inputs"] = example["inputs"][:max_inputs]
    if prepends_inputs(hparams):
        inputs = example["inputs"]
        separator = tf.zeros([1], inputs.dtype)
        if infer:
            example["partial_targets"] = tf.concat([inputs, separator], 0)
        else:
            example["targets"] = tf.concat([inputs, separator, example["targets"]], 0)
    if "targets" in example and max_targets > 0:
        example["targets"] = example["targets"][:max_targets]
    return example


def _truncate(hparams):
    return _as_written(lambda example: preprocess_common(example, hparams))


def _padded_buckets(ds, hparams, max_length: int, length_multiplier: int) -> tf.data.Dataset:
    """Batches padded to one of a few lengths (``padded_batching_scheme``): both features of a
    batch get the smallest allowed length that holds its longest example, so an XLA step
    compiles a bounded number of shapes. Longer examples (evaluation without
    ``eval_drop_long_sequences``) get a last bucket padded to its own longest example."""
    scheme = padded_batching_scheme(
        hparams.batch_size,
        max_length,
        hparams.padded_bucket_step,
        hparams.min_length_bucket,
        length_multiplier,
    )
    lengths = tf.constant(scheme["lengths"], tf.int32)
    ds = ds.bucket_by_sequence_length(
        example_length,
        [length + 1 for length in scheme["lengths"]],
        scheme["batch_sizes"] + [scheme["batch_sizes"][-1]],
        padded_shapes={k: [None] for k in ds.element_spec},
    )

    @_as_written
    def pad_to_bucket(batch):
        longest = tf.maximum(tf.shape(batch["inputs"])[1], tf.shape(batch["targets"])[1])
        index = tf.searchsorted(lengths, [longest], side="left")[0]
        bucket_length = tf.gather(lengths, tf.minimum(index, tf.size(lengths) - 1))
        size = tf.where(index < tf.size(lengths), bucket_length, longest)
        return {k: tf.pad(v, [[0, 0], [0, size - tf.shape(v)[1]]]) for k, v in batch.items()}

    return ds.map(pad_to_bucket, num_parallel_calls=tf.data.AUTOTUNE)


def read_records(
    files: list[str],
    shuffle_files: bool,
    input_context: tf.distribute.InputContext | None = None,
    seed: int | None = None,
) -> tf.data.Dataset:
    """The serialized records of ``files`` that this input pipeline reads, one epoch.

    Several pipelines (workers): when the files divide evenly among them, each reads its own
    files; otherwise every pipeline reads all files in the same order (shuffled with the
    same ``seed``, which the workers agree on at start: ``training/cluster/startup_handshake.py``)
    and keeps every n-th record. Either way each record is read by one pipeline per epoch,
    and no pipeline gets more files than another. (T2T's workers off TPU each read every file
    from a random offset, ``skip_random_fraction``; it dealt whole files, 10 on 4 hosts
    3/3/2/2, only to TPU hosts: ``data_generators/problem.py``, ``_dataset_partition``.)
    """
    pipelines = input_context.num_input_pipelines if input_context is not None else 1
    shard_records = pipelines > 1 and len(files) % pipelines != 0
    ds = tf.data.Dataset.from_tensor_slices(files)
    if pipelines > 1 and not shard_records:
        ds = ds.shard(pipelines, input_context.input_pipeline_id)
    if shuffle_files:
        ds = ds.shuffle(len(files), seed=seed)
    ds = ds.interleave(
        tf.data.TFRecordDataset,
        # T2T's Problem.dataset: 8 files at a time when it shuffles them (training), else one
        # file after another (eval: what --eval_steps cuts short is the last files)
        cycle_length=min(8, len(files)) if shuffle_files else 1,
        num_parallel_calls=tf.data.AUTOTUNE,
        # Record sharding needs one record order on every pipeline.
        deterministic=seed is not None or not shuffle_files or shard_records,
    )
    if shard_records:
        ds = ds.shard(pipelines, input_context.input_pipeline_id)
    return ds


def fixed_batch_per_replica(batch_size: int, input_context) -> int:
    """With ``use_fixed_batch_size``, T2T's ``batch_size`` is the examples of a worker's step,
    which ``T2TModel._shard_features`` splits over its datashards with ``tf.split`` (it fails
    unless they divide it): here each of this worker's replicas reads its share."""
    replicas = 1
    if input_context is not None:
        replicas = input_context.num_replicas_in_sync // input_context.num_input_pipelines
    if batch_size % replicas:
        raise HParamsError(
            f"batch_size={batch_size} with use_fixed_batch_size is the examples of a step, "
            f"split over this worker's {replicas} replicas: give a multiple of {replicas} "
            "(T2T's split fails otherwise)."
        )
    return batch_size // replicas


def make_dataset(
    filepattern: str,
    mode: str,
    hparams,
    *,
    input_context: tf.distribute.InputContext | None = None,
    length_multiplier: int = 1,
    seed: int | None = None,
    repeat: bool | None = None,
    augment: Callable[[tf.data.Dataset], tf.data.Dataset] | None = None,
    max_length: int | None = None,
    read_example: Callable[[tf.Tensor], dict | tf.data.Dataset] | None = None,
    packed: bool = False,
    pack: bool | None = None,
    split_targets: bool = True,
) -> tf.data.Dataset:
    """Batches ``{"inputs": int32 [B, Li], "targets": int32 [B, Lt]}``, each padded with 0.

    ``augment`` (training only) transforms the repeated stream of examples before batching
    (word dropout, ``data/word_dropout.py``). ``max_length``: the longest example kept (a
    problem's ``max_length``, T2T's ``Problem.max_length``); by default the ``max_length``
    hparam, else ``batch_size``, which alone size the buckets, as in T2T. ``read_example``:
    the problem's own reading of a serialized record (``Problem.read_example_fn``), in place
    of this module's parsing and ``max_input_seq_length``/``max_target_seq_length``
    truncation. ``packed``: the records are packed (a ``*_packed`` problem's, read by this
    module); ``pack``: pack the examples here, as T2T's ``pack_dataset`` hparam does (default:
    that hparam); either way the batches also hold ``PACKED_FEATURES``. ``split_targets``:
    cut the batches' targets into chunks when ``split_targets_chunk_length`` asks
    (``target_chunks.py``; False where whole examples are read, e.g. dev references)."""
    is_train = mode == TRAIN
    pack = hparams.get("pack_dataset", False) if pack is None else pack
    chunk_length = hparams.get("split_targets_chunk_length", 0) if split_targets else 0
    if chunk_length:
        target_chunks.check(hparams, is_train, packed or pack)
    repeat = is_train if repeat is None else repeat
    files = list_shards(filepattern)
    ds = read_records(files, is_train, input_context, seed)
    deterministic = seed is not None or not is_train
    if read_example is not None:
        ds = _read_by_problem(ds, read_example, deterministic)
    else:
        ds = ds.map(
            parse_and_truncate(hparams, packed),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=deterministic,
        )
    _check_packed_truncation(ds, hparams, max_length)
    if hparams.get("split_to_length", 0):  # after any reading: T2T's preprocess_example_common
        length = hparams.split_to_length
        ds = ds.flat_map(_as_written(lambda ex: split_to_length(ex, length)))
    if is_train:
        ds = ds.shuffle(RECORD_SHUFFLE_BUFFER, seed=seed)
    if pack:
        ds = _pack(ds, hparams)
    if repeat:
        ds = ds.repeat()
    if is_train and augment is not None:
        ds = augment(ds)

    # T2T's data_reader.input_fn: a problem's max_length (Problem.max_length) filters, the
    # buckets come from the hparams alone (hparams_to_batching_scheme)
    bucket_max_length = hparams.max_length or hparams.batch_size
    # T2T's Problem.max_length: split_to_length first
    max_length = max_length or hparams.get("split_to_length", 0) or bucket_max_length
    # T2T's data_reader.input_fn (gpu_valid_size): min_length in every mode, max_length in
    # training or with eval_drop_long_sequences
    drop_long = is_train or hparams.get("eval_drop_long_sequences", False)
    min_length = hparams.get("min_length", 0)
    if drop_long or min_length > 0:
        longest = max_length if drop_long else 10**9
        ds = ds.filter(
            _as_written(
                lambda ex: tf.logical_and(
                    example_length(ex) >= min_length, example_length(ex) <= longest
                )
            )
        )
    if hparams.get("use_fixed_batch_size", False):
        ds = ds.padded_batch(
            fixed_batch_per_replica(hparams.batch_size, input_context),
            padded_shapes={k: [None] for k in ds.element_spec},
        )
    elif hparams.get("padded_bucket_step", 0):
        ds = _padded_buckets(ds, hparams, bucket_max_length, length_multiplier)
    else:
        scheme = batching_scheme(
            hparams.batch_size,
            bucket_max_length,
            hparams.min_length_bucket,
            hparams.length_bucket_step,
            length_multiplier=length_multiplier,
        )
        ds = ds.bucket_by_sequence_length(
            example_length,
            scheme["boundaries"],
            scheme["batch_sizes"],
            padded_shapes={k: [None] for k in ds.element_spec},
        )
    if is_train and hparams.get("batch_shuffle_size", 0):
        ds = ds.shuffle(hparams.batch_shuffle_size, seed=seed)
    if chunk_length:  # T2T's input_fn: after the batching and batch_shuffle_size
        max_chunks = hparams.get("split_targets_max_chunks", 100)
        replicas = 1  # this pipeline's replicas, each taking the next batch of a step
        if input_context is not None:
            pipelines = input_context.num_input_pipelines
            replicas = max(input_context.num_replicas_in_sync // pipelines, 1)
        ds = target_chunks.split_targets(ds, chunk_length, max_chunks, replicas)
    options = tf.data.Options()
    options.deterministic = deterministic
    return ds.with_options(options).prefetch(tf.data.AUTOTUNE)


def _check_packed_truncation(ds: tf.data.Dataset, hparams, row_length: int | None) -> None:
    """One line for packed records with a ``max_input_seq_length``/``max_target_seq_length``
    below their rows' length (``row_length``: the problem's ``max_length``, its
    ``packed_length``): T2T cuts the ids but not their segmentation and positions
    (``Problem.preprocess_example``), which then no longer fit (its model fails); here the run
    stops before it starts. A limit of at least the row length cuts nothing, there as here."""
    limits = [
        name
        for name in ("max_input_seq_length", "max_target_seq_length")
        if 0 < hparams.get(name, 0) < (row_length or 2**31)
    ]
    if limits and any(name in ds.element_spec for name in PACKED_FEATURES):
        raise DataError(
            f"{' and '.join(limits)} would cut packed rows (up to {row_length or '?'} ids) "
            "apart from their segmentation and positions; set them to 0, or to at least the "
            "problem's packed_length."
        )


def _pack(ds: tf.data.Dataset, hparams) -> tf.data.Dataset:
    """T2T's ``pack_dataset`` hparam (``data_generators/problem.py``, ``Problem.dataset``):
    examples packed on the fly into rows of ``max_length``, after the record shuffle and before
    the repeat, in training and evaluation alike; with ``use_custom_ops`` (T2T's default) as
    T2T's compiled ``pack_sequences2`` op packs (``data/custom_op_packing.py``), else as its
    tf ops do (``data/dataset_packing.py``): ``generator_utils.pack_dataset``."""
    if not hparams.get("max_length", 0) > 0:
        raise HParamsError(
            "pack_dataset=True packs examples into rows of max_length tokens: set max_length "
            "(e.g. --hparams=max_length=256), as T2T's pack_dataset needs."
        )
    # A packed problem's rows are packed again, their old segmentations dropped, as T2T's
    # pack_dataset keeps only the keys it packs. (imported here: only a packing run pays for it)
    from t2t_repro.data import dataset_packing

    return dataset_packing.pack_dataset(
        ds, hparams.max_length, list(FEATURES), hparams.get("use_custom_ops", True)
    )


def count_tokens(batch: dict) -> dict:
    """Non-padding tokens per feature and the padded sizes (for tokens/s and padding stats)."""
    stats = {}
    for name in FEATURES:
        stats[f"{name}_nonpadding"] = tf.reduce_sum(tf.cast(batch[name] > 0, tf.int64))
        stats[f"{name}_padded"] = tf.cast(tf.size(batch[name]), tf.int64)
    return stats
