"""Datagen pieces shared by every problem: vocab files, the manifest's JSON, progress lines and
parallel encoding (the run itself: ``datagen_engine``; T2T's shards: ``t2t_shards``).

* The vocabulary is loaded when its file exists, else built with
  ``SubwordTextEncoder.build_from_generator`` and stored atomically (temp file + rename).
* Pairs are encoded (EOS appended to both sides) and serialized by a pool of worker processes
  over chunks of lines, with bounded look-ahead so memory stays flat on WMT-sized corpora.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.data import records
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

DEFAULT_SEED = 429459  # t2t-datagen's --random_seed


def _text_encoder():
    # Imported late: the subword encoder loads numba, which a trainer that only reads
    # shards (and imports the problems, hence this module) does not need.
    from t2t_repro.text_encoding import text_encoder

    return text_encoder


# ----------------------------------------------------------------------------- vocabulary


def load_vocab(path: str):
    return _text_encoder().SubwordTextEncoder(path)


def build_vocab(
    path: str, lines: Iterable[str], target_size: int, max_subtoken_length: int | None = 200
):
    """Build a subword vocab from ``lines`` and store it at ``path`` atomically; returns the
    encoder."""
    te = _text_encoder()
    encoder = te.SubwordTextEncoder.build_from_generator(
        lines, target_size, max_subtoken_length=max_subtoken_length
    )
    fileio.makedirs_for(path)
    encoder.store_to_file(path)  # atomic itself
    return encoder


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with fileio.open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def vocab_trial_cases(vocab_path: str) -> int | None:
    """``max_cases`` of the trial run that built this vocab (``<vocab>.max_cases``), None for a full
    one."""
    try:
        with fileio.open(vocab_path + ".max_cases") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def set_vocab_trial_cases(vocab_path: str, max_cases: int | None) -> None:
    marker = vocab_path + ".max_cases"
    if max_cases is None:
        if fileio.exists(marker):
            fileio.remove(marker)
    else:
        with fileio.open(marker, "w") as f:
            f.write(f"{max_cases}\n")


def vocab_is_current(vocab_path: str, max_cases: int | None) -> bool:
    """A vocab file is kept unless it is missing or a ``--max_cases`` trial of another size
    built it."""
    trial = vocab_trial_cases(vocab_path)
    return fileio.isfile(vocab_path) and (trial is None or trial == max_cases)


def keep_or_build_vocab(
    vocab_path: str, max_cases: int | None, load: Callable, build: Callable
) -> tuple[object, bool]:
    """(encoder, built): ``load(path)`` of a current vocab (``vocab_is_current``), else
    ``build(path)`` (which stores it) marked with ``max_cases``. Every problem's one path."""
    if vocab_is_current(vocab_path, max_cases):
        return load(vocab_path), False
    encoder = build(vocab_path)
    set_vocab_trial_cases(vocab_path, max_cases)
    return encoder, True


def load_json(path: str) -> dict | None:
    try:
        with fileio.open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def store_json(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename)."""
    write_text_atomically(path, json.dumps(data, indent=1, sort_keys=True))


# ----------------------------------------------------------------------------- progress


class Progress:
    """Count done, rate and ETA on stderr: a rewritten line on a terminal, a line every 15 s
    otherwise. Lines by default; ``count`` formats another unit (bytes: ``download.py``),
    ``initial`` is what was done before this run (a resumed download), left out of the rate."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        stream=None,
        enabled: bool = True,
        unit: str = "lines",
        count: Callable[[float], str] = lambda n: f"{n:,.0f}",
        initial: int = 0,
    ):
        self.label, self.total, self.enabled = label, total, enabled
        self.unit, self.count = unit, count
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = 1.0 if self.tty else 15.0
        self.start = self.last = time.monotonic()
        self.done = self.initial = initial

    def _line(self, now: float) -> str:
        rate = (self.done - self.initial) / max(now - self.start, 1e-9)
        unit = f" {self.unit}" if self.unit else ""
        text = f"{self.label}: {self.count(self.done)}"
        if self.total:
            text += f"/{self.count(self.total)}{unit} ({100.0 * self.done / self.total:.0f}%)"
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            text += f", {self.count(rate)}{unit}/s, ETA {eta:,.0f}s" if eta != float("inf") else ""
        else:
            text += f"{unit}, {self.count(rate)}{unit}/s"
        return text

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if self.enabled and now - self.last >= self.interval:
            self.last = now
            end = "\r" if self.tty else "\n"
            print(
                self._line(now).ljust(79 if self.tty else 0), end=end, file=self.stream, flush=True
            )

    def close(self) -> None:
        if self.enabled:
            now = time.monotonic()
            print(
                f"{self._line(now)}, done in {now - self.start:.1f}s".ljust(79 if self.tty else 0),
                file=self.stream,
                flush=True,
            )


# ----------------------------------------------------------------------------- encoding

_WORKER_ENCODER = None


def _init_worker(vocab) -> None:
    """``vocab``: the subword vocab file, or the encoder itself (a T2T datagen encodes with the
    vocabulary as built, which can differ from its file read back: text_encoder.py's newline
    quirk); forked workers inherit it."""
    global _WORKER_ENCODER
    _WORKER_ENCODER = load_vocab(vocab) if isinstance(vocab, str) else vocab


def _encode_chunk(chunk: Sequence[tuple]) -> list[tuple[int, bytes, int, int]]:
    """(index, source, target[, other features]) -> (index, serialized Example, input tokens,
    target tokens); other features (a T2T sample's) are written as they are."""
    eos = EOS_ID
    enc = _WORKER_ENCODER
    sources = enc.encode_batch([c[1] for c in chunk])
    targets = enc.encode_batch([c[2] for c in chunk])
    out = []
    for item, src, tgt in zip(chunk, sources, targets, strict=True):
        src, tgt = list(src) + [eos], list(tgt) + [eos]
        features = {**item[3], "inputs": src, "targets": tgt} if len(item) > 3 else None
        serialized = records.serialize_example(features or {"inputs": src, "targets": tgt})
        out.append((item[0], serialized, len(src), len(tgt)))
    return out


def chunks(items: Iterable, size: int) -> Iterator[list]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def default_num_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def encode_examples(
    items: Iterable[tuple],
    vocab_path,
    num_workers: int | None = None,
    chunk_size: int = 2000,
    min_pool_items: int | None = None,
    expected_items: int | None = None,
) -> Iterator[tuple[int, bytes, int, int]]:
    """Encode and serialize ``(index, source, target[, other features])`` items, in order, in
    ``num_workers`` processes.

    Small jobs (``expected_items``, or the items themselves, fewer than ``min_pool_items``) and
    ``num_workers == 1`` run in this process. Look-ahead is bounded (4 chunks per worker), so
    memory does not grow with the corpus.
    Workers are forked: they only run the pure-python encoder and protobuf, never TensorFlow ops.
    """
    workers = num_workers or default_num_workers()
    if min_pool_items is None:
        min_pool_items = 4 * chunk_size
    items = iter(items)
    head = [] if workers <= 1 else list(itertools.islice(items, min_pool_items))
    items = itertools.chain(head, items)
    small = len(head) < min_pool_items or (expected_items or min_pool_items) < min_pool_items
    if workers <= 1 or small:
        _init_worker(vocab_path)
        for chunk in chunks(items, chunk_size):
            yield from _encode_chunk(chunk)
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ctx.Pool(workers, initializer=_init_worker, initargs=(vocab_path,)) as pool:
        pending: collections.deque = collections.deque()
        for chunk in chunks(items, chunk_size):
            pending.append(pool.apply_async(_encode_chunk, (chunk,)))
            while len(pending) >= 4 * workers:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()
