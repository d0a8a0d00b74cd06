"""``t2t-decoder --decode_shards=K --worker_id=I``: K processes decode one file, each its
share, and the K outputs joined in worker order are the whole file's decodes.

Names are T2T's (``tensor2tensor/utils/decoding.py``, ``_add_shard_to_filename``): worker I
writes ``<decode_to_file>`` followed by its shard number, I + ``shards_start_offset`` (a
decode hparam, default 0), in three digits (``out.de000``, ``out.de001``...; with the decode
hparam ``shard_google_format=True``, ``out.de-00001-of-00004``), so ``cat out.de0*`` joins
them. Without ``--decode_to_file`` the output is named after the input's shard name, which
T2T's ``_decode_filename`` suffixes once more: ``<input>001001.<model>...decodes``. T2T's
workers each read a file split beforehand, ``<input>`` with the suffix; here worker I takes
the I-th of K contiguous, nearly equal blocks of ``<input>``'s lines, and reads the pre-split
file as T2T did only when ``<input>`` itself does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from t2t_repro import fileio
from t2t_repro.data.text_files import read_delimited_records


@dataclass(frozen=True)
class ShardNames:
    """One worker's place among ``shards`` and T2T's naming of its files."""

    shards: int
    worker_id: int
    start_offset: int = 0  # the decode hparam shards_start_offset
    google_format: bool = False  # the decode hparam shard_google_format

    @property
    def suffix(self) -> str:
        """T2T's: the shard number ``"%.3d"``, or ``"-%05d-of-%05d"`` in Google's format."""
        number = self.worker_id + self.start_offset
        if self.google_format:
            return f"-{number:05d}-of-{self.shards:05d}"
        sign = "-" if number < 0 else ""  # "%.3d": three digits after the sign
        return f"{sign}{abs(number):03d}"

    def of(self, path: str) -> str:
        """``path`` with this worker's shard suffix."""
        return path + self.suffix


def share_bounds(count: int, shards: int, worker_id: int) -> tuple[int, int]:
    """[start, end) of worker ``worker_id``'s block of ``count`` lines: contiguous blocks in
    worker order, sizes differing by at most one."""
    return count * worker_id // shards, count * (worker_id + 1) // shards


def earlier_lines(input_path: str, names: ShardNames, delimiter: str = "\n") -> list[bytes]:
    """The records of the workers before this one in a file they share (sampling counts a
    line's repeats over the whole file: ``LineDecoder.decode_lines``); none for T2T's
    pre-split files, each of which is counted on its own."""
    if not fileio.isfile(input_path):
        return []
    lines = read_delimited_records(input_path, delimiter)
    return lines[: share_bounds(len(lines), names.shards, names.worker_id)[0]]


def worker_lines(
    input_path: str, names: ShardNames, delimiter: str = "\n"
) -> tuple[list[bytes], str]:
    """The raw records (lines, or the decode hparam ``delimiter``'s pieces, as T2T's
    ``_get_sorted_inputs`` splits each worker's file) this worker decodes and where they come
    from (for its log line)."""
    if fileio.isfile(input_path):
        lines = read_delimited_records(input_path, delimiter)
        start, end = share_bounds(len(lines), names.shards, names.worker_id)
        what = "lines" if delimiter == "\n" else "records"
        return lines[start:end], f"{what} {start + 1}-{end} of {len(lines)} of {input_path}"
    split = names.of(input_path)
    if fileio.isfile(split):  # T2T's layout: the file split beforehand
        return read_delimited_records(split, delimiter), split
    raise FileNotFoundError(
        f"--decode_from_file: neither {input_path!r} (to share among the --decode_shards "
        f"workers) nor T2T's pre-split {split!r} exists."
    )
