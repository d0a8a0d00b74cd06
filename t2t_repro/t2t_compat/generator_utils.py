"""``tensor2tensor.data_generators.generator_utils`` for a T2T usr_dir: how T2T 1.15 writes,
names and shuffles shards and builds a vocabulary (``generator_utils.py``: ``generate_files``,
``shuffle_dataset``, ``get_or_generate_vocab_inner``, ``generate_lines_for_vocab``).

Same files as T2T from the same examples: shard names ``<name>[-unshuffled]-<split>-NNNNN-of-
MMMMM``, examples dealt round-robin, then each unshuffled file shuffled in memory with Python's
global ``random`` (seeded by ``t2t-datagen``'s ``--random_seed`` before each problem:
``bin/t2t_datagen.py, set_random_seed``) and written under its final name. Every file is
written to a temp name and renamed. Nothing is downloaded: ``maybe_download`` finds the file in
--tmp_dir or says where to put it.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import random
import shutil
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open, atomic_path
from t2t_repro.data import records
from t2t_repro.data.text_files import sample_lines_for_vocab
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import refusals

UNSHUFFLED_SUFFIX = "-unshuffled"


def seed_like_t2t_datagen(seed: int) -> None:
    """What ``t2t-datagen`` does before each problem: Python's and numpy's global seeds (the
    shuffle below draws from the former)."""
    random.seed(seed)
    np.random.seed(seed)


def sharded_name(base_name: str, shard: int, total_shards: int) -> str:
    return f"{base_name}-{shard:05d}-of-{total_shards:05d}"


def shard_filepath(fname: str, num_shards: int) -> list[str]:
    return [sharded_name(fname, shard, num_shards) for shard in range(num_shards)]


def _data_filenames(output_name: str, output_dir: str, num_shards: int) -> list[str]:
    return [os.path.join(output_dir, f) for f in shard_filepath(output_name, num_shards)]


def train_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return _data_filenames(problem + "-train", output_dir, num_shards)


def dev_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return _data_filenames(problem + "-dev", output_dir, num_shards)


def test_data_filenames(problem: str, output_dir: str, num_shards: int) -> list[str]:
    return _data_filenames(problem + "-test", output_dir, num_shards)


def combined_data_filenames(problem: str, output_dir: str, num_training_shards: int) -> list[str]:
    return (
        train_data_filenames(problem, output_dir, num_training_shards)
        + dev_data_filenames(problem, output_dir, 1)
        + test_data_filenames(problem, output_dir, 1)
    )


def to_example(dictionary: dict) -> tf.train.Example:
    """A ``tf.train.Example`` of int, float or text lists (T2T's ``to_example``)."""
    features = {}
    for key, values in dictionary.items():
        if isinstance(values, map):
            values = list(values)
        if not values:
            raise DataError(f"empty generated field {key!r}: every feature needs a value.")
        first = values[0]
        if isinstance(first, (int, np.integer)):
            feature = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif isinstance(first, float):
            feature = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(first, (str, bytes)):
            values = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
            feature = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        else:
            raise DataError(
                f"feature {key!r}: value {first!r} of type {type(first).__name__} is not an "
                "int, float or string list."
            )
        features[key] = feature
    return tf.train.Example(features=tf.train.Features(feature=features))


def outputs_exist(filenames: Iterable[str]) -> str | None:
    for name in filenames:
        final = name.replace(UNSHUFFLED_SUFFIX, "")
        if fileio.exists(final):
            return final
    return None


def generate_files(
    generator: Iterable[dict | None],
    output_filenames: list[str],
    max_cases: int | None = None,
    cycle_every_n: int = 1,
) -> list[int]:
    """Examples round-robin into ``output_filenames`` (T2T's ``generate_files``); skipped when
    any final file exists. Returns the records written per file (T2T returns nothing)."""
    if outputs_exist(output_filenames):
        return []
    counts = [0] * len(output_filenames)
    with contextlib.ExitStack() as stack:  # an error removes every temp file, renames none
        writers = [stack.enter_context(_record_writer(p)) for p in output_filenames]
        counter, shard = 0, 0
        for case in generator:
            if case is None:
                continue
            counter += 1
            if max_cases and counter > max_cases:
                break
            writers[shard].write(to_example(case).SerializeToString(deterministic=True))
            counts[shard] += 1
            if counter % cycle_every_n == 0:
                shard = (shard + 1) % len(output_filenames)
    return counts


@contextlib.contextmanager
def _record_writer(path: str) -> Iterator[tf.io.TFRecordWriter]:
    """A TFRecord writer on a temp name, renamed to ``path`` when the block completes."""
    with atomic_path(path) as tmp:
        writer = tf.io.TFRecordWriter(tmp)
        try:
            yield writer
        finally:
            writer.close()


def read_records(filename: str) -> list[bytes]:
    return list(tf.data.TFRecordDataset(filename).as_numpy_iterator())


def write_records(serialized: Iterable[bytes], out_filename: str) -> None:
    records.write_records_atomically(out_filename, serialized)


def shuffle_dataset(
    filenames: list[str], extra_fn: Callable[[list[bytes]], list[bytes]] | None = None
) -> None:
    """Shuffle each unshuffled file into its final name with the global ``random``, in order
    (T2T's ``shuffle_dataset``/``_shuffle_single``); skipped when any final file exists."""
    if outputs_exist(filenames):
        return
    for filename in filenames:
        serialized = read_records(filename)
        random.shuffle(serialized)
        if extra_fn is not None:
            serialized = extra_fn(serialized)
        write_records(serialized, filename.replace(UNSHUFFLED_SUFFIX, ""))
        fileio.remove(filename)


def generate_dataset_and_shuffle(
    train_gen: Iterable[dict], train_paths: list[str], dev_gen, dev_paths, shuffle: bool = True
) -> None:
    """``generate_files`` for train, then dev, then ``shuffle_dataset`` of both (T2T's)."""
    generate_files(train_gen, train_paths)
    generate_files(dev_gen, dev_paths)
    if shuffle:
        shuffle_dataset(train_paths + dev_paths)


def maybe_download(directory: str, filename: str, uri: str) -> str:
    """``directory/filename`` when it is there, or a copy of a local ``uri``; never a
    download."""
    fileio.makedirs(directory)
    path = os.path.join(directory, filename)
    if fileio.exists(path):
        return path
    if uri and not uri.startswith(("http://", "https://", "ftp://")) and fileio.exists(uri):
        fileio.copy(uri, path)
        return path
    raise DataError(
        f"{path} is missing and nothing is downloaded here: fetch {uri} yourself and put "
        f"{filename} (or the files extracted from it) in --tmp_dir {directory}."
    )


def maybe_download_from_drive(directory: str, filename: str, url: str) -> str:
    """T2T's ``generator_utils.py:maybe_download_from_drive`` returns ``directory/filename``
    when it is there without downloading; so does this, and it refuses as ``maybe_download``
    when the file is absent (nothing is downloaded here)."""
    return maybe_download(directory, filename, url)


def gunzip_file(gz_path: str, new_path: str) -> None:
    if fileio.exists(new_path):
        return
    with gzip.open(gz_path, "rb") as src, atomic_open(new_path, "wb") as out:
        shutil.copyfileobj(src, out)


def generate_lines_for_vocab(
    tmp_dir: str, sources: list, file_byte_budget: float = 1e6
) -> Iterator[str]:
    """T2T's sample of each file's lines for the vocabulary (``generate_lines_for_vocab``):
    ``sources`` are ``[url, [file, ...]]`` entries, the files in ``tmp_dir``."""
    from t2t_repro.t2t_compat.translate import local_file  # the one place archives are opened

    for url, files in sources:
        for lang_file in files:
            path = local_file(tmp_dir, url, lang_file)
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
    from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder

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
    """The vocabulary of column ``index`` (0 or 1) of a tab-separated file in ``tmp_dir``."""
    from t2t_repro.t2t_compat.text_problems import txt_line_iterator

    def generate() -> Iterator[str]:
        for line in txt_line_iterator(os.path.join(tmp_dir, source_filename)):
            if line and "\t" in line:
                yield line.split("\t", 1)[index].strip()

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())


def get_or_generate_txt_vocab(data_dir: str, vocab_filename: str, vocab_size, filepatterns):
    """The vocabulary of every line of the files ``filepatterns`` match (T2T's glob order)."""
    from t2t_repro.t2t_compat.text_problems import txt_line_iterator

    patterns = [filepatterns] if isinstance(filepatterns, str) else filepatterns

    def generate() -> Iterator[str]:
        for pattern in patterns:
            for filename in tf.io.gfile.glob(pattern):
                yield from txt_line_iterator(filename)

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.generator_utils")
