"""How T2T 1.15 deals examples into shards and shuffles them: every problem's one algorithm.

T2T (``data_generators/generator_utils.py``): ``generate_files`` deals the examples of a
stream round-robin into ``<problem>-unshuffled-<split>-NNNNN-of-MMMMM`` files (moving to the
next file every ``cycle_every_n`` cases, stopping after ``max_cases``), then
``shuffle_dataset`` reads each unshuffled file in order, shuffles its records in memory with
Python's ``random`` (seeded once per problem by ``t2t-datagen``'s ``--random_seed``) and writes
them under the final name (``-unshuffled`` removed). So the shuffle of a file depends on every
file shuffled before it: the files form one sequence of draws.

A rerun that keeps finished files still draws what their shuffles drew: ``random.shuffle``
of a list draws ``randbelow(i + 1)`` for ``i`` from ``len - 1`` down to 1, which depends only
on the list's length and the generator's state, so shuffling a list of the same length in
place of a kept file leaves the generator where the full run left it.
"""

from __future__ import annotations

import contextlib
import os
import random
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_path
from t2t_repro.data import records

UNSHUFFLED_SUFFIX = "-unshuffled"  # T2T's generator_utils.UNSHUFFLED_SUFFIX


class Shuffler(Protocol):
    """``random.Random(seed)``, or the ``random`` module itself (T2T's global generator)."""

    def shuffle(self, x: list) -> None: ...


def seed_like_t2t_datagen(seed: int) -> None:
    """What ``t2t-datagen`` does before each problem (``bin/t2t_datagen.py``,
    ``set_random_seed``): TensorFlow's, Python's and numpy's global seeds. A T2T problem's
    shuffle draws from Python's; a usr_dir's generator may draw from any."""
    tf.random.set_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    note_tool_seed(seed)


# T2T seeds the global generators once per problem (t2t-datagen's --random_seed; the trainer's
# --random_seed before its --generate_data) and never again: a problem's own generate_data that
# calls Text2TextProblem's (super()) continues from them. The seed a tool last gave them (None:
# not seeded), and how many tool runs of a problem's own generate_data are under way.
_TOOL_SEED: list[int | None] = [None]
_SEEDED_RUNS = [0]


def note_tool_seed(seed: int | None) -> None:
    """A tool seeded the global generators with ``seed`` (the trainer its ``--random_seed``)."""
    _TOOL_SEED[0] = seed


def tool_seed() -> int | None:
    """The seed a tool last gave the global generators: what a datagen continuing from them
    records in its manifest."""
    return _TOOL_SEED[0]


@contextlib.contextmanager
def seeded_run() -> Iterator[None]:
    """A tool runs a problem's own ``generate_data`` on the generators it seeded: a datagen
    called inside it (``in_seeded_run``) does not seed them again."""
    _SEEDED_RUNS[0] += 1
    try:
        yield
    finally:
        _SEEDED_RUNS[0] -= 1


def in_seeded_run() -> bool:
    """Whether a tool's run of a problem's own ``generate_data`` is under way (its generators
    already seeded)."""
    return _SEEDED_RUNS[0] > 0


def final_path(path: str) -> str:
    """The shuffled file's name of an unshuffled one (T2T's ``_shuffle_single``)."""
    return path.replace(UNSHUFFLED_SUFFIX, "")


def unshuffled_paths(data_dir: str, problem_name: str, split: str, num_shards: int) -> list[str]:
    """T2T's names of a split's unshuffled files (``Problem.training_filepaths(...,
    shuffled=False)``)."""
    return records.shard_paths(data_dir, problem_name + UNSHUFFLED_SUFFIX, split, num_shards)


def shard_of(index: int, num_shards: int, cycle_every_n: int = 1) -> int:
    """The file that ``generate_files`` writes its ``index``-th case (0-based) to."""
    return (index // cycle_every_n) % num_shards


def numbered_cases(
    cases: Iterable[dict | None], max_cases: int | None = None
) -> Iterator[tuple[int, dict]]:
    """``(index, case)`` as ``generate_files`` counts them: ``None`` skipped, at most
    ``max_cases``."""
    index = 0
    for case in cases:
        if case is None:
            continue
        if max_cases and index >= max_cases:
            return
        yield index, case
        index += 1


def write_round_robin(
    items: Iterable[tuple[int, bytes]],
    paths: Sequence[str],
    todo: Iterable[int] | None = None,
    cycle_every_n: int = 1,
) -> list[int]:
    """``generate_files``' dealing of ``(index, serialized example)`` items into ``paths`` (only
    the shards in ``todo``, default all; items of others are dropped). Each file is a TFRecord
    written to a temp name and renamed when all are complete; returns the records per file."""
    wanted = set(range(len(paths)) if todo is None else todo)
    counts = [0] * len(paths)
    with contextlib.ExitStack() as stack:  # an error removes every temp file, renames none
        writers = {i: stack.enter_context(_record_writer(paths[i])) for i in sorted(wanted)}
        for index, serialized in items:
            shard = shard_of(index, len(paths), cycle_every_n)
            if shard in writers:
                writers[shard].write(serialized)
                counts[shard] += 1
    return counts


def write_cases(
    cases: Iterable[dict | None],
    paths: Sequence[str],
    serialize: Callable[[dict], bytes],
    max_cases: int | None = None,
    cycle_every_n: int = 1,
    todo: Iterable[int] | None = None,
) -> list[int]:
    """``generate_files`` of a stream of cases (``numbered_cases``); only the cases of the
    shards in ``todo`` are serialized."""
    wanted = set(range(len(paths)) if todo is None else todo)
    items = (
        (index, serialize(case))
        for index, case in numbered_cases(cases, max_cases)
        if shard_of(index, len(paths), cycle_every_n) in wanted
    )
    return write_round_robin(items, paths, wanted, cycle_every_n)


@contextlib.contextmanager
def _record_writer(path: str) -> Iterator[tf.io.TFRecordWriter]:
    with atomic_path(path) as tmp:
        writer = tf.io.TFRecordWriter(tmp)
        try:
            yield writer
        finally:
            writer.close()


def _payloads(path: str, keep: bool) -> Iterator[bytes | None]:
    """A TFRecord file's records (``None`` each when not ``keep``): 8-byte length, 4-byte CRC,
    data, 4-byte CRC. The CRCs are not checked: the files are this run's or a finished
    shard's."""
    with fileio.open(path, "rb") as f:
        data = f.read()
    pos, end = 0, len(data)
    while pos < end:
        (size,) = struct.unpack_from("<Q", data, pos)
        yield data[pos + 12 : pos + 12 + size] if keep else None
        pos += 16 + size


def read_records(path: str) -> list[bytes]:
    return list(_payloads(path, keep=True))


def count_records(path: str) -> int:
    return sum(1 for _ in _payloads(path, keep=False))


def shuffle_in_order(
    paths: Sequence[str],
    rng: Shuffler,
    todo: Iterable[int] | None = None,
    extra_fn: Callable[[list[bytes]], list[bytes]] | None = None,
) -> list[int]:
    """``shuffle_dataset``: each unshuffled file of ``todo`` (default all), in order, shuffled
    with ``rng`` into its final name and removed; for the others (finished shards kept by a
    rerun) a list of their final file's length is shuffled instead, so every later file gets
    the draws of a full run (not so after an ``extra_fn`` that changes the count: such a run
    writes every file). Returns the records per final file."""
    wanted = set(range(len(paths)) if todo is None else todo)
    counts = []
    for i, path in enumerate(paths):
        final = final_path(path)
        if i not in wanted:
            placeholder = [0] * count_records(final)
            rng.shuffle(placeholder)
            counts.append(len(placeholder))
            continue
        serialized = read_records(path)
        rng.shuffle(serialized)
        if extra_fn is not None:
            serialized = extra_fn(serialized)
        counts.append(len(serialized))  # the final file's (a kept one's count is read so)
        records.write_records_atomically(final, serialized)
        fileio.remove(path)
    return counts


def leftovers(data_dir: str, problem_name: str) -> list[str]:
    """Unshuffled files and temp files of an interrupted run of ``problem_name``."""
    unshuffled = fileio.glob(os.path.join(data_dir, f"{problem_name}{UNSHUFFLED_SUFFIX}-*"))
    temps = fileio.glob(os.path.join(data_dir, f"{problem_name}-*.tmp"))
    return sorted(set(unshuffled) | set(temps))
