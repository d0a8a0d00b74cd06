"""Where the WSJ treebank's ``.mrg`` files are, and which go to train, dev and test.

Files are found under ``tmp_dir`` by name, ``wsj_NNNN.mrg`` (any case, any depth), on disk or
inside a ``treebank.zip`` placed in ``tmp_dir`` or ``tmp_dir/ptb_sample`` (the NLTK sample as
distributed; it is read in place, never extracted). File ``wsj_SSNN`` belongs to section ``SS``.
When the same file number is found twice, the copy on disk wins over the zip's.

Two layouts, told apart by the section numbers present:

* ``ldc`` (the LDC Treebank-3 ``parsed/mrg/wsj/SS/`` tree, any section >= 02): the standard
  split, sections 02-21 train (~39.8K sentences), 22 dev (1,700), 23 test (2,416);
* ``ptb_sample`` (only files wsj_0001 ... wsj_0199, the NLTK 10% sample, ~3.9K sentences):
  wsj_0001-0179 train, wsj_0180-0189 dev, wsj_0190-0199 test.
"""

from __future__ import annotations

import dataclasses
import os
import re
import zipfile
from collections.abc import Iterable, Iterator

from t2t_repro.data.text_files import DataError, decode_utf8
from t2t_repro.parsing.tree_files import TreeReadStats, iter_tree_items, read_text
from t2t_repro.parsing.trees import Tree, normalize

LDC, PTB_SAMPLE = "ldc", "ptb_sample"
LDC_SECTIONS = {"train": tuple(range(2, 22)), "dev": (22,), "test": (23,)}
SAMPLE_FILES = {"train": (1, 179), "dev": (180, 189), "test": (190, 199)}  # inclusive ranges
ZIP_PLACES = ("treebank.zip", os.path.join("ptb_sample", "treebank.zip"))
_NAME_RE = re.compile(r"(?:^|/)wsj_(\d{4})\.mrg$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class MrgFile:
    """One treebank file: its 4-digit number and where it is (``member`` set: inside zip
    ``path``)."""

    number: int
    path: str
    member: str = ""

    @property
    def section(self) -> int:
        return self.number // 100

    @property
    def where(self) -> str:
        return f"{self.path}/{self.member}" if self.member else self.path


def find_mrg_files(tmp_dir: str) -> list[MrgFile]:
    """Every ``wsj_NNNN.mrg`` under ``tmp_dir`` (disk first, then ``treebank.zip``), one per
    number."""
    if not os.path.isdir(tmp_dir):
        raise DataError(f"--tmp_dir {tmp_dir} does not exist. " + missing_help(tmp_dir))
    found: dict[int, MrgFile] = {}
    for root, dirs, names in os.walk(tmp_dir):
        dirs.sort()
        for name in sorted(names):
            m = _NAME_RE.search(name)
            if m:
                found.setdefault(
                    int(m.group(1)), MrgFile(int(m.group(1)), os.path.join(root, name))
                )
    for place in ZIP_PLACES:
        path = os.path.join(tmp_dir, place)
        if not os.path.isfile(path):
            continue
        try:
            with zipfile.ZipFile(path) as z:
                members = sorted(z.namelist())
        except zipfile.BadZipFile as e:
            raise DataError(f"{path} is not a readable zip file ({e}).") from None
        for member in members:
            m = _NAME_RE.search(member)
            if m:
                found.setdefault(int(m.group(1)), MrgFile(int(m.group(1)), path, member))
    return [found[n] for n in sorted(found)]


def missing_help(tmp_dir: str) -> str:
    return (
        f"Put the treebank's wsj_NNNN.mrg files under {tmp_dir} (LDC Treebank-3: the "
        "parsed/mrg/wsj/ folder, sections 02-23), or the NLTK sample treebank.zip (a copy may "
        "be at ../shared/data/ptb_sample) in it."
    )


def detect_layout(files: Iterable[MrgFile]) -> str:
    """``ldc`` if any file lies in a section >= 02, ``ptb_sample`` if all are wsj_0001-0199."""
    files = list(files)
    if not files:
        raise DataError("No wsj_NNNN.mrg files found.")
    return LDC if any(f.section >= 2 for f in files) else PTB_SAMPLE


def split_files(files: Iterable[MrgFile], split: str, layout: str) -> list[MrgFile]:
    """The files of ``split`` under ``layout``; DataError naming what is missing."""
    files = list(files)
    if layout == LDC:
        sections = LDC_SECTIONS[split]
        chosen = [f for f in files if f.section in sections]
        missing = sorted(set(sections) - {f.section for f in chosen})
        if missing:
            raise DataError(
                f"WSJ {split} needs sections {sections[0]:02d}-{sections[-1]:02d}; no "
                f"files of section(s) {', '.join(f'{s:02d}' for s in missing)} found."
            )
        return chosen
    if layout == PTB_SAMPLE:
        lo, hi = SAMPLE_FILES[split]
        chosen = [f for f in files if lo <= f.number <= hi]
        if not chosen:
            raise DataError(
                f"No files wsj_{lo:04d}-wsj_{hi:04d} (the ptb_sample {split} split) found."
            )
        return chosen
    raise ValueError(f"unknown WSJ layout {layout!r} ({LDC} or {PTB_SAMPLE})")


def iter_raw_trees(files: Iterable[MrgFile], stats: TreeReadStats) -> Iterator[Tree]:
    """The trees of the files in order, zips opened once; malformed trees skipped and counted."""
    archives: dict[str, zipfile.ZipFile] = {}
    try:
        for f in files:
            if f.member:
                if f.path not in archives:
                    archives[f.path] = zipfile.ZipFile(f.path)
                text = decode_utf8(archives[f.path].read(f.member), stats).replace("\r\n", "\n")
            else:
                text = read_text(f.path, stats)
            for item in iter_tree_items(text, f.where, "mrg"):
                stats.record(item)
                if item.tree is not None:
                    yield item.tree
    finally:
        for z in archives.values():
            z.close()


def normalized(trees: Iterable[Tree], stats: TreeReadStats) -> Iterator[Tree]:
    """``trees.normalize``d trees; a tree that was only traces is dropped
    (``stats.dropped_empty``)."""
    for tree in trees:
        out = normalize(tree)
        if out is None:
            stats.dropped_empty += 1
            continue
        yield out


def split_trees(
    tmp_dir: str, split: str, layout: str = "auto", stats: TreeReadStats | None = None
) -> list[Tree]:
    """Normalised gold trees of one split of the treebank found in ``tmp_dir``."""
    stats = stats if stats is not None else TreeReadStats()
    files = find_mrg_files(tmp_dir)
    if not files:
        raise DataError(f"No wsj_NNNN.mrg files under {tmp_dir}. " + missing_help(tmp_dir))
    if layout == "auto":
        layout = detect_layout(files)
    return list(normalized(iter_raw_trees(split_files(files, split, layout), stats), stats))
