"""Where one split's parallel text comes from: two aligned files, a TSV file, or a generator.

A problem lists, for each split, one or more ``PairSource``s; datagen concatenates them. Each
source can ``check()`` itself before anything expensive starts (files present, both sides of
equal length), yields raw ``(source, target)`` text pairs (stripped, possibly empty: the caller
drops and counts empty pairs), and yields lines for building the vocabulary.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence

from t2t_repro import fileio
from t2t_repro.data import text_files
from t2t_repro.data.text_files import DataError, ReadStats


class PairSource:
    """One parallel corpus (or one part of a split)."""

    description = "parallel text"

    def check(self) -> int | None:
        """Raise DataError if the data is missing or malformed; return the pair count if known."""
        return None

    def pairs(self, stats: ReadStats) -> Iterator[tuple[str, str]]:
        raise NotImplementedError

    def vocab_lines(self, byte_budget: float) -> Iterator[str]:
        """Text for building the subword vocabulary (both sides); T2T samples ~byte_budget per
        file."""
        for src, tgt in self.pairs(ReadStats()):
            yield src
            yield tgt

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


class FilePairs(PairSource):
    """Two line-aligned files (plain, .gz, or SGM test sets), line i of one translating line i of
    the other."""

    def __init__(self, source_path: str, target_path: str, sgm: bool = False):
        self.source_path, self.target_path, self.sgm = source_path, target_path, sgm
        self.description = f"{source_path} + {target_path}"

    def check(self) -> int:
        missing = [p for p in (self.source_path, self.target_path) if not fileio.isfile(p)]
        if missing:
            raise DataError("Missing parallel data file(s): " + ", ".join(missing))
        return text_files.check_line_counts(self.source_path, self.target_path, sgm=self.sgm)

    def pairs(self, stats: ReadStats) -> Iterator[tuple[str, str]]:
        src_lines = text_files.read_lines(self.source_path, stats, sgm=self.sgm)
        tgt_lines = text_files.read_lines(self.target_path, stats, sgm=self.sgm)
        n_src = n_tgt = 0
        for src, tgt in itertools.zip_longest(src_lines, tgt_lines):
            n_src += src is not None
            n_tgt += tgt is not None
            if src is None or tgt is None:
                continue  # count the rest, then complain
            yield src, tgt
        if n_src != n_tgt:  # files changed since check(), or check() was skipped
            raise DataError(
                f"Parallel files differ in length: {self.source_path} has {n_src} lines "
                f"but {self.target_path} has {n_tgt}."
            )

    def vocab_lines(self, byte_budget: float) -> Iterator[str]:
        for path in (self.source_path, self.target_path):
            yield from text_files.sample_lines_for_vocab(path, byte_budget, sgm=self.sgm)


class TsvPairs(PairSource):
    """One file (plain or .gz), ``source<TAB>target`` per line (columns chosen by index).

    A line with too few columns counts as an empty pair (dropped and counted by datagen).
    """

    def __init__(self, path: str, source_column: int = 0, target_column: int = 1):
        self.path, self.source_column, self.target_column = path, source_column, target_column
        self.description = f"{path} (columns {source_column},{target_column})"

    def check(self) -> int:
        if not fileio.isfile(self.path):
            raise DataError(f"Missing parallel data file: {self.path}")
        return text_files.count_lines(self.path)

    def _split(self, line: str) -> tuple[str, str]:
        cols = line.split("\t")
        get = lambda i: cols[i].strip() if i < len(cols) else ""  # noqa: E731
        return get(self.source_column), get(self.target_column)

    def pairs(self, stats: ReadStats) -> Iterator[tuple[str, str]]:
        for raw in text_files.iter_raw_lines(self.path, drop_carriage_returns=True):
            yield self._split(text_files.decode_utf8(raw, stats))

    def vocab_lines(self, byte_budget: float) -> Iterator[str]:
        # Both columns share the file, so it gets twice the per-file budget (two "files" in T2T).
        for line in text_files.sample_lines_for_vocab(self.path, 2 * byte_budget):
            yield from self._split(line)


class GeneratedPairs(PairSource):
    """Pairs produced by a function (algorithmic and toy problems): no files at all."""

    def __init__(self, make_pairs: Callable[[], Iterable[tuple[str, str]]], description: str):
        self.make_pairs = make_pairs
        self.description = description

    def pairs(self, stats: ReadStats) -> Iterator[tuple[str, str]]:
        for src, tgt in self.make_pairs():
            yield src.strip(), tgt.strip()


def parallel_source(spec, root: str = "") -> PairSource:
    """A PairSource from a short spec: ``(src_path, tgt_path)``, a ``.tsv``/``.tsv.gz`` path, or
    a PairSource.

    Relative paths are taken under ``root`` (the problem's tmp_dir).
    """
    if isinstance(spec, PairSource):
        return spec
    join = lambda p: os.path.join(root, os.path.expanduser(p))  # noqa: E731
    if isinstance(spec, (str, os.PathLike)):
        return TsvPairs(join(os.fspath(spec)))
    if isinstance(spec, Sequence) and len(spec) == 2:
        return FilePairs(join(os.fspath(spec[0])), join(os.fspath(spec[1])))
    raise TypeError(f"Not a parallel-data spec: {spec!r} (want (src, tgt) paths or a .tsv path).")


def check_all(sources: Sequence[PairSource]) -> int | None:
    """check() every source, collecting every problem into one DataError; total pairs if all
    known."""
    errors, total = [], 0
    for source in sources:
        try:
            n = source.check()
        except DataError as e:
            errors.append(str(e))
            continue
        total = None if (n is None or total is None) else total + n
    if errors:
        raise DataError("\n".join(errors))
    return total
