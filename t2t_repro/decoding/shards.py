"""``t2t-decoder --decode_shards=K --worker_id=I``: K processes decode one file, each its
share, and the K outputs joined in worker order are the whole file's decodes.

Names are T2T's (``tensor2tensor/utils/decoding.py``, ``_add_shard_to_filename``): worker I
writes ``<decode_to_file>`` followed by I in three digits (``out.de000``, ``out.de001``...;
without ``--decode_to_file``, ``<input>NNN.<model>...decodes``), so ``cat out.de0*`` joins
them. T2T's workers each read a file split beforehand, ``<input>NNN``; here worker I takes
the I-th of K contiguous, nearly equal blocks of ``<input>``'s lines, and reads
``<input>NNN`` as T2T did only when ``<input>`` itself does not exist.
"""

from __future__ import annotations

from t2t_repro import fileio
from t2t_repro.data.text_files import iter_raw_lines


def with_shard(path: str, worker_id: int) -> str:
    """T2T's shard name: the worker id in three digits appended (``"%.3d"``)."""
    return f"{path}{worker_id:03d}"


def share_bounds(count: int, shards: int, worker_id: int) -> tuple[int, int]:
    """[start, end) of worker ``worker_id``'s block of ``count`` lines: contiguous blocks in
    worker order, sizes differing by at most one."""
    return count * worker_id // shards, count * (worker_id + 1) // shards


def earlier_lines(input_path: str, shards: int, worker_id: int) -> list[bytes]:
    """The lines of the workers before this one in a file they share (sampling counts a
    line's repeats over the whole file: ``LineDecoder.decode_lines``); none for T2T's
    pre-split files, each of which is counted on its own."""
    if not fileio.isfile(input_path):
        return []
    lines = list(iter_raw_lines(input_path))
    return lines[: share_bounds(len(lines), shards, worker_id)[0]]


def worker_lines(input_path: str, shards: int, worker_id: int) -> tuple[list[bytes], str]:
    """The raw lines this worker decodes and where they come from (for its log line)."""
    if fileio.isfile(input_path):
        lines = list(iter_raw_lines(input_path))
        start, end = share_bounds(len(lines), shards, worker_id)
        return lines[start:end], f"lines {start + 1}-{end} of {len(lines)} of {input_path}"
    split = with_shard(input_path, worker_id)
    if fileio.isfile(split):  # T2T's layout: the file split beforehand
        return list(iter_raw_lines(split)), split
    raise FileNotFoundError(
        f"--decode_from_file: neither {input_path!r} (to share among the --decode_shards "
        f"workers) nor T2T's pre-split {split!r} exists."
    )
