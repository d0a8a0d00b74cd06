"""``tensor2tensor.data_generators.generator_utils`` for a T2T usr_dir: how T2T 1.15 writes,
names and shuffles shards and builds a vocabulary (``generator_utils.py``: ``generate_files``,
``shuffle_dataset``, ``get_or_generate_vocab_inner``, ``generate_lines_for_vocab``).

Same files as T2T from the same examples: shard names ``<name>[-unshuffled]-<split>-NNNNN-of-
MMMMM``, examples dealt round-robin, then each unshuffled file shuffled in memory with Python's
global ``random`` (seeded by ``t2t-datagen``'s ``--random_seed`` before each problem:
``bin/t2t_datagen.py, set_random_seed``) and written under its final name: the project's one
algorithm (``data/t2t_shards.py``), which these names call. Every file is written to a temp
name and renamed. ``maybe_download`` uses the file in --tmp_dir when it is there, else
downloads it (``data/download.py``); an archive a url names is extracted there
(``extract_archive``, which ``translate.py, compile_data`` shares, as T2T's extracts).
"""

from __future__ import annotations

import gzip
import math
import os
import random
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open, atomic_path
from t2t_repro.data import dataset_packing, download, example_packing, records, t2t_shards
from t2t_repro.data.text_files import extract_all, read_lines, sample_lines_for_vocab
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import refusals

UNSHUFFLED_SUFFIX = t2t_shards.UNSHUFFLED_SUFFIX
sharded_name = records.sharded_name


def shard_filepath(fname: str, num_shards: int) -> list[str]:
    return [sharded_name(fname, shard, num_shards) for shard in range(num_shards)]


def train_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return records.shard_paths(output_dir, problem, records.TRAIN, num_shards)


def dev_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return records.shard_paths(output_dir, problem, records.DEV, num_shards)


def test_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return records.shard_paths(output_dir, problem, records.TEST, num_shards)


def combined_data_filenames(problem: str, output_dir: str, num_training_shards: int) -> list[str]:
    return (
        train_data_filenames(problem, output_dir, num_training_shards)
        + dev_data_filenames(problem, output_dir, 1)
        + test_data_filenames(problem, output_dir, 1)
    )


class ExampleError(DataError, ValueError):
    """A case ``to_example`` cannot write (T2T's raises ValueError): one line naming it."""


def to_example(dictionary: dict) -> tf.train.Example:
    """T2T's ``to_example`` (``records.to_example``), which refuses an empty feature."""
    try:
        return records.to_example(dictionary, allow_empty=False)
    except DataError as e:
        raise ExampleError(str(e)) from None


def serialize(case: dict) -> bytes:
    """A case's ``to_example`` bytes, its features in key order (as this project writes)."""
    try:
        return records.serialize_example(case, allow_empty=False)
    except DataError as e:
        raise ExampleError(str(e)) from None


def outputs_exist(filenames: Iterable[str]) -> str | None:
    for name in filenames:
        final = t2t_shards.final_path(name)
        if fileio.exists(final):
            return final
    return None


def generate_files(
    generator: Iterable[dict | None],
    output_filenames: list[str],
    max_cases: int | None = None,
    cycle_every_n: int = 1,
) -> None:
    """T2T's ``generate_files`` (the engine's ``t2t_shards.write_cases``); skipped when any
    final file exists."""
    if not outputs_exist(output_filenames):
        t2t_shards.write_cases(generator, output_filenames, serialize, max_cases, cycle_every_n)


def generate_files_distributed(
    generator: Iterable[dict],
    output_name: str,
    output_dir: str,
    num_shards: int = 1,
    max_cases: int | None = None,
    task_id: int = 0,
) -> str:
    """T2T's: every case of ``generator`` (at most ``max_cases``) into shard ``task_id`` of
    ``num_shards`` alone (``sharded_name``); returns that file's path."""
    if not 0 <= task_id < num_shards:
        raise ValueError(f"task_id {task_id} is not a shard of {num_shards}.")
    path = os.path.join(output_dir, records.sharded_name(output_name, task_id, num_shards))

    def cases() -> Iterator[bytes]:  # T2T reads one case past max_cases, then stops
        for count, case in enumerate(generator, 1):
            if max_cases and count > max_cases:
                return
            yield serialize(case)

    records.write_records_atomically(path, cases())
    return path


def random_deinterleave(text: str, separator_symbol: str = "X") -> tuple[str, str]:
    """T2T's fill-in-the-blanks pair of ``text`` (its words cut at random points, the pieces
    dealt alternately to two strings, ``separator_symbol`` where a piece was cut out), drawing
    from the global ``random`` in T2T's order, so a seeded run gives T2T's pairs."""
    words = text.strip().split(" ")
    if len(words) <= 1:
        return text, ""
    starts = [True] + [False] * (len(words) - 1)
    for _ in range(int(math.exp(random.uniform(0, math.log(len(words)))))):
        starts[random.randint(1, len(words) - 1)] = True
    sides: tuple[list[str], list[str]] = ([], [])
    side = random.randint(0, 1)
    for word, starts_piece in zip(words, starts, strict=True):
        if starts_piece:
            sides[side].append(separator_symbol)
            side = 1 - side
        sides[side].append(word)
    return " ".join(sides[0]), " ".join(sides[1])


def make_tmp_dir(suffix: str = "", prefix: str = "tmp", dir: str | None = None) -> str:  # noqa: A002
    """T2T's: ``tempfile.mkdtemp``, or under ``dir`` a new ``<prefix><1-9999><suffix>``."""
    if dir is None:
        return tempfile.mkdtemp(suffix, prefix)
    while True:
        path = os.path.join(dir, f"{prefix}{random.randint(1, 9999)}{suffix}")
        if not fileio.exists(path):
            fileio.makedirs(path)
            return path


def tfrecord_iterator(filenames: list[str], gzipped: bool = False, example_spec=None):
    """T2T's: each record of the files in order, as bytes, or parsed by ``example_spec`` (a
    dict of numpy arrays; a ``VarLenFeature`` as T2T's session gives it, a
    ``SparseTensorValue``)."""
    compression = "GZIP" if gzipped else None
    for path in filenames:
        for record in tf.data.TFRecordDataset(path, compression_type=compression):
            if not example_spec:
                yield record.numpy()
                continue
            parsed = tf.io.parse_single_example(record, example_spec)
            yield {name: _session_value(value) for name, value in parsed.items()}


def _session_value(value):
    if isinstance(value, tf.SparseTensor):
        return tf.compat.v1.SparseTensorValue(
            value.indices.numpy(), value.values.numpy(), value.dense_shape.numpy()
        )
    return value.numpy()


def tfrecord_iterator_for_problem(problem, data_dir: str, dataset_split=None):
    """T2T's: the records of ``problem``'s split (train by default) in ``data_dir``, parsed
    by its ``example_reading_spec`` (a project problem's: its int ``inputs`` and ``targets``)."""
    split = dataset_split or "train"  # T2T's default: tf.estimator.ModeKeys.TRAIN
    filenames = sorted(fileio.glob(problem.filepattern(data_dir, split)))
    reading = getattr(problem, "example_reading_spec", None)
    ints = tf.io.VarLenFeature(tf.int64)
    spec = reading()[0] if reading else {"inputs": ints, "targets": ints}
    return tfrecord_iterator(filenames, example_spec=spec)


def read_records(filename: str) -> list[bytes]:
    return t2t_shards.read_records(filename)


def write_records(serialized: Iterable[bytes], out_filename: str) -> None:
    records.write_records_atomically(out_filename, serialized)


def shuffle_dataset(
    filenames: list[str], extra_fn: Callable[[list[bytes]], list[bytes]] | None = None
) -> None:
    """T2T's ``shuffle_dataset``: each file shuffled in order with the global ``random`` (the
    engine's ``t2t_shards.shuffle_in_order``); skipped when any final file exists."""
    if outputs_exist(filenames):
        return
    t2t_shards.shuffle_in_order(filenames, random, extra_fn=extra_fn)


def generate_dataset_and_shuffle(
    train_gen: Iterable[dict], train_paths: list[str], dev_gen, dev_paths, shuffle: bool = True
) -> None:
    """``generate_files`` for train, then dev, then ``shuffle_dataset`` of both (T2T's)."""
    generate_files(train_gen, train_paths)
    generate_files(dev_gen, dev_paths)
    if shuffle:
        shuffle_dataset(train_paths + dev_paths)


def download_report_hook(count: int, block_size: int, total_size: int) -> None:
    """T2T's ``urlretrieve`` report hook: the percentage done, on one rewritten line."""
    percent = int(count * block_size * 100 / total_size)
    print(f"\r{percent}% completed", end="\r")


def maybe_download(directory: str, filename: str, uri: str) -> str:
    """T2T's ``maybe_download``: ``directory/filename`` when it is there (never fetched
    again), else a copy of a local or ``gs://`` ``uri`` (T2T's ``tf.gfile.Copy``), else the
    http(s) download (``data/download.py``: resumed, retried, renamed when whole)."""
    fileio.makedirs(directory)
    path = os.path.join(directory, filename)
    if fileio.exists(path):
        return path
    if download.is_web_url(uri):
        return download.fetch(uri, path)
    if uri and _readable(uri):
        with atomic_path(path) as tmp:
            fileio.copy(uri, tmp)
        return path
    raise DataError(
        f"{path} is missing and {uri!r} is neither an http(s) URL nor a file here: put "
        f"{filename} in --tmp_dir {directory} (from {uri}), then run again."
    )


def _readable(uri: str) -> bool:
    try:
        return fileio.exists(uri)
    except Exception:  # a scheme tf.io.gfile does not implement (ftp://)
        return False


def maybe_download_from_drive(directory: str, filename: str, url: str) -> str:
    """T2T's ``maybe_download_from_drive``: ``directory/filename`` when it is there, else the
    Google Drive download with its confirm step (``download.fetch_from_drive``)."""
    fileio.makedirs(directory)
    return download.fetch_from_drive(url, os.path.join(directory, filename))


def gunzip_file(gz_path: str, new_path: str) -> None:
    if fileio.exists(new_path):
        return
    with gzip.open(gz_path, "rb") as src, atomic_open(new_path, "wb") as out:
        shutil.copyfileobj(src, out)


def extract_archive(tmp_dir: str, url: str) -> None:
    """The archive ``url`` names, found in ``tmp_dir`` or downloaded there
    (``maybe_download``), extracted there, as T2T's ``generate_lines_for_vocab`` and
    ``translate.py, compile_data`` do (a ``.zip`` with ``zipfile``, as ``compile_data``)."""
    archive = maybe_download(tmp_dir, os.path.basename(url), url)
    if archive.endswith(".zip"):
        extract_zip(archive, tmp_dir)
    else:
        extract_all(archive, tmp_dir)


def fetch_or_extract(tmp_dir: str, url: str, present: Callable[[], bool]) -> None:
    """What ``present`` looks for in ``tmp_dir``: else the file ``url`` names is fetched
    (``maybe_download``) and, unless that was the file looked for, extracted (T2T's
    ``compile_data`` downloads a url's file, then reads it or extracts it)."""
    if present():
        return
    maybe_download(tmp_dir, os.path.basename(url), url)
    if not present():
        extract_archive(tmp_dir, url)


def extract_zip(archive: str, tmp_dir: str) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(tmp_dir)
    except zipfile.BadZipFile as e:
        raise DataError(f"{archive}: not a readable zip archive ({e}).") from None


def _local_file(tmp_dir: str, url: str, name: str) -> str:
    """``tmp_dir/name``, fetched or extracted from the archive ``url`` names when missing."""
    path = os.path.join(tmp_dir, name)
    fetch_or_extract(tmp_dir, url, lambda: fileio.exists(path))
    if not fileio.exists(path):
        raise DataError(f"{path} is missing and the archive for {url} does not hold it.")
    return path


def generate_lines_for_vocab(
    tmp_dir: str, sources: list, file_byte_budget: float = 1e6
) -> Iterator[str]:
    """T2T's sample of each file's lines for the vocabulary (``generate_lines_for_vocab``):
    ``sources`` are ``[url, [file, ...]]`` entries, the files in ``tmp_dir``."""
    for url, files in sources:
        for lang_file in files:
            path = _local_file(tmp_dir, url, lang_file)
            if lang_file.endswith(".gz"):  # read from its gunzipped copy beside it, as T2T
                gunzip_file(path, path[:-3])
                path = path[:-3]
            yield from sample_lines_for_vocab(path, file_byte_budget)


def get_or_generate_vocab_inner(
    data_dir: str,
    vocab_filename: str,
    vocab_size: int,
    generator: Iterable[str],
    max_subtoken_length: int | None = None,
    reserved_tokens: list[str] | None = None,
):
    """The subword vocabulary at ``data_dir/vocab_filename``: loaded when there, else built
    from ``generator`` toward ``vocab_size`` and stored (T2T's function of that name)."""
    # T2T's class (its internals for a usr_dir), the project's encoder underneath
    from t2t_repro.t2t_compat.subword_text_encoder import SubwordTextEncoder

    path = os.path.join(data_dir, vocab_filename) if data_dir and vocab_filename else None
    if path and fileio.isfile(path):
        return SubwordTextEncoder(path)
    encoder = SubwordTextEncoder.build_from_generator(
        generator,
        vocab_size,
        max_subtoken_length=max_subtoken_length,
        reserved_tokens=reserved_tokens,
    )
    if path:
        fileio.makedirs(data_dir)
        encoder.store_to_file(path)
    return encoder


def get_or_generate_vocab(
    data_dir: str,
    tmp_dir: str,
    vocab_filename: str,
    vocab_size: int,
    sources: list,
    file_byte_budget: float = 1e6,
    max_subtoken_length: int | None = None,
):
    lines = generate_lines_for_vocab(tmp_dir, sources, file_byte_budget)
    return get_or_generate_vocab_inner(
        data_dir, vocab_filename, vocab_size, lines, max_subtoken_length
    )


def get_or_generate_tabbed_vocab(
    data_dir: str, tmp_dir: str, source_filename: str, index: int, vocab_filename: str, vocab_size
):
    """The vocabulary of column ``index`` (0 or 1) of a tab-separated file in ``tmp_dir``
    (its lines read as T2T's ``tf.gfile`` reads them: ``text_files.read_lines``)."""
    path = os.path.join(tmp_dir, source_filename)

    def generate() -> Iterator[str]:
        for line in read_lines(path, keep_byte_order_mark=True):
            if line and "\t" in line:
                yield line.split("\t", 1)[index].strip()

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())


def get_or_generate_txt_vocab(data_dir: str, vocab_filename: str, vocab_size, filepatterns):
    """The vocabulary of every line of the files ``filepatterns`` match (T2T's glob order)."""
    patterns = [filepatterns] if isinstance(filepatterns, str) else filepatterns

    def generate() -> Iterator[str]:
        for pattern in patterns:
            for filename in tf.io.gfile.glob(pattern):
                yield from read_lines(filename, keep_byte_order_mark=True)

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())


# T2T's packing of examples (datagen's packed_length) and of datasets (pack_dataset hparam):
# the project's (docs/packing.md). INDEX_DTYPE: the dtype of T2T's packed segmentations.
INDEX_DTYPE = tf.int32
SequencePacker = example_packing.SequencePacker
SequencePairPacker = example_packing.SequencePairPacker
pack_examples = example_packing.pack_examples
pack_dataset = dataset_packing.pack_dataset

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.generator_utils")
