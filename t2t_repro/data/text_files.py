"""Reading raw text for datagen: plain or gzip files, SGM test sets, members of WMT tarballs.

Lines are read as bytes (so only ``\\n`` ends a line, never a stray ``\\r`` or U+2028 inside a
sentence, which would misalign two parallel files), decoded as UTF-8 with undecodable bytes
replaced by U+FFFD and *counted*, and stripped of surrounding whitespace, as T2T does. Corpus
lines (``read_lines``) are T2T's: it reads them by iterating a ``tf.gfile`` file, whose
``ReadLine`` drops every ``\\r`` in a line (``a\\rb\\nc\\r\\n`` reads as ``ab``, ``c``).
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import platform
import re
import shutil
import tarfile
from collections.abc import Iterator
from typing import BinaryIO

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.errors import DataError as DataError  # defined with the other user errors

_SEG_RE = re.compile(rb"<seg[^>]*>(.*)</seg>", re.IGNORECASE)


@dataclasses.dataclass
class ReadStats:
    """Counters that reading raw text fills in (reported in the datagen summary)."""

    replaced_bytes: int = 0  # undecodable bytes replaced by U+FFFD
    dropped_empty: int = 0  # pairs dropped because one side was empty

    def add(self, other: ReadStats) -> None:
        self.replaced_bytes += other.replaced_bytes
        self.dropped_empty += other.dropped_empty


def decode_utf8(raw: bytes, stats: ReadStats | None = None) -> str:
    """UTF-8 decode; each undecodable byte run becomes U+FFFD and its byte count is added to
    stats."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out, pos, replaced = [], 0, 0
    while True:
        try:
            out.append(raw[pos:].decode("utf-8"))
            break
        except UnicodeDecodeError as e:
            out.append(raw[pos : pos + e.start].decode("utf-8"))
            out.append("\ufffd")
            replaced += e.end - e.start
            pos += e.end
    if stats is not None:
        stats.replaced_bytes += replaced
    return "".join(out)


def is_gzip(path: str) -> bool:
    with fileio.open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def open_binary(path: str) -> BinaryIO:
    """Open a plain or gzip-compressed file for reading bytes (gzip detected by content)."""
    if not fileio.isfile(path):
        raise DataError(f"Missing data file: {path}")
    if not is_gzip(path):
        return fileio.open(path, "rb")
    return gzip.open(fileio.open(path, "rb") if fileio.is_url(path) else path, "rb")


def iter_raw_lines(
    path: str,
    sgm: bool = False,
    keep_byte_order_mark: bool = False,
    drop_carriage_returns: bool = False,
) -> Iterator[bytes]:
    """Raw byte lines of a file, without the line end; for SGM only the ``<seg>`` contents.
    A UTF-8 byte-order mark opening the file is dropped, unless ``keep_byte_order_mark``.
    ``drop_carriage_returns``: every ``\\r`` of a line is dropped, as ``tf.gfile``'s line
    iteration drops it (TF's ``BufferedInputStream::ReadLine``), which T2T reads corpora with."""
    with open_binary(path) as f:
        first = not keep_byte_order_mark
        for line in f:
            if drop_carriage_returns:
                line = line.replace(b"\r", b"")
            if first:
                if line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
                    line = line[3:]
                first = False
            if sgm:
                m = _SEG_RE.search(line)
                if m is None:
                    continue
                yield m.group(1)
            else:
                yield line.rstrip(b"\r\n")


def read_delimited_records(path: str, delimiter: str = "\n") -> list[bytes]:
    """The raw records of a file to decode: its lines, or with another ``delimiter`` the
    pieces between delimiters, a last empty one dropped (T2T's ``decoding.py``,
    ``_get_sorted_inputs``)."""
    if delimiter == "\n":
        return list(iter_raw_lines(path))
    with open_binary(path) as f:
        records = f.read().split(delimiter.encode("utf-8"))
    if records and not records[-1].strip():
        records.pop()
    return records


def read_lines(
    path: str,
    stats: ReadStats | None = None,
    sgm: bool = False,
    keep_byte_order_mark: bool = False,
    drop_carriage_returns: bool = True,
) -> Iterator[str]:
    """Decoded, stripped lines of a plain/.gz (or SGM) text file, every ``\\r`` in a line
    dropped as T2T's ``tf.gfile`` drops it (``text_problems.py, txt_line_iterator``), unless
    not ``drop_carriage_returns`` (T2T's ``bleu_hook`` reads a whole file: its ``\\r`` stay).
    ``keep_byte_order_mark`` reads them as ``tf.gfile`` does too: a byte-order mark opening
    the file stays on the first line (it is not whitespace)."""
    for raw in iter_raw_lines(
        path,
        sgm=sgm,
        keep_byte_order_mark=keep_byte_order_mark,
        drop_carriage_returns=drop_carriage_returns,
    ):
        yield decode_utf8(raw, stats).strip()


def count_lines(path: str, sgm: bool = False) -> int:
    """Number of lines ``read_lines`` yields (fast byte counting for plain and gzip files)."""
    if sgm:
        return sum(1 for _ in iter_raw_lines(path, sgm=True))
    count, last = 0, b"\n"
    with open_binary(path) as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                break
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def check_line_counts(source_path: str, target_path: str, sgm: bool = False) -> int:
    """Both sides of a parallel corpus must have as many lines; returns the count or raises
    DataError."""
    n_src, n_tgt = count_lines(source_path, sgm), count_lines(target_path, sgm)
    if n_src != n_tgt:
        raise DataError(
            f"Parallel files differ in length: {source_path} has {n_src} lines but "
            f"{target_path} has {n_tgt}. Line i of one must translate line i of the other."
        )
    return n_src


def uncompressed_size(path: str) -> int:
    """Bytes of text in a file, for T2T's vocab sampling rate (gzip: the trailer's size field)."""
    size = fileio.getsize(path)
    if size >= 18 and is_gzip(path):
        with fileio.open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            isize = int.from_bytes(f.read(4), "little")  # size mod 2**32
        return isize if isize >= size else size * 3
    return size


def sample_lines_for_vocab(path: str, byte_budget: float = 1e6, sgm: bool = False) -> Iterator[str]:
    """T2T's ``generate_lines_for_vocab`` for one file.

    Keeps one line every ``countermax + 1`` (countermax = size / budget / 2) until about
    ``byte_budget`` bytes of text were taken, so roughly the first half of a big file is sampled.
    """
    budget = byte_budget
    countermax = int(uncompressed_size(path) / byte_budget / 2)
    counter = 0
    for line in read_lines(path, sgm=sgm):
        if counter < countermax:
            counter += 1
            continue
        if budget <= 0:
            break
        budget -= len(line)
        counter = 0
        yield line


def extract_member(archive: str, member: str, dest_root: str) -> str:
    """Extract one member of a tar(.gz) archive to ``dest_root/member`` (atomically); returns the
    path.

    T2T extracts WMT tarballs into tmp_dir with the members' own paths; doing the same means a
    tmp_dir that T2T filled works here and later runs read the extracted files directly.
    """
    dest = os.path.join(dest_root, *member.split("/"))
    if os.path.isfile(dest):
        return dest
    try:
        with tarfile.open(archive, "r:*") as tar:
            try:
                info = tar.getmember(member)
            except KeyError:
                raise DataError(f"{archive} has no member {member!r}.") from None
            src = tar.extractfile(info)
            if src is None:
                raise DataError(f"{archive}: member {member!r} is not a regular file.")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with src, atomic_open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 22)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise DataError(f"Could not extract {member!r} from {archive}: {e}") from e
    return dest


def extract_all(archive: str, dest_root: str) -> None:
    """Extract every member of a tar(.gz) archive into ``dest_root`` with its own path, as
    T2T's ``compile_data`` and ``generate_lines_for_vocab`` extract a corpus tarball into
    tmp_dir (only regular files and directories inside ``dest_root``: tarfile's ``data``
    filter)."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            extract_safely(tar, dest_root)
    except tarfile.TarError as e:
        raise DataError(f"{archive}: not a readable tar archive ({e}).") from None


def extract_safely(tar: tarfile.TarFile, dest_root: str, members=None) -> None:
    """``tar.extractall`` with tarfile's ``data`` filter: nothing lands outside ``dest_root``,
    no device file, no setuid bit, no owner taken from the archive. Python 3.11.0-3.11.3
    (Debian 12's is 3.11.2) have no filters: there only regular files and directories inside
    ``dest_root`` are extracted, with the filter's modes and this user as owner, and any other
    member is refused by name."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest_root, members=members, filter="data")
        return
    root = os.path.realpath(dest_root)
    checked = []
    for member in tar.getmembers() if members is None else members:
        target = os.path.realpath(os.path.join(root, member.name))
        if not (member.isfile() or member.isdir()) or os.path.commonpath([root, target]) != root:
            raise DataError(
                f"{tar.name}: member {member.name!r} is not a regular file or directory inside "
                f"{dest_root}; Python {platform.python_version()} cannot extract it safely "
                "(no tarfile filters before Python 3.11.4): extract the archive yourself."
            )
        member.mode = member.mode & 0o755 | (0o600 if member.isfile() else 0o700)
        member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
        checked.append(member)
    tar.extractall(dest_root, members=checked)
