"""Reading and writing files of bracketed trees, reporting every malformed tree with ``file:line``.

Two layouts are read:

* ``lines``: one tree per line, what parsers and ``t2t-evalb`` exchange; every line is one item
  (blank lines included), so a bad line never shifts the trees after it; a line holding several
  top-level brackets (EVALB reads them) becomes one tree with an unlabelled root;
* ``mrg``: the treebank's own layout, a tree spanning several indented lines and usually
  wrapped in an unlabelled root, ``( (S ...) )``; trees are delimited by bracket balance.

``layout="auto"`` picks ``mrg`` for ``*.mrg`` files and for text with an indented line. A
malformed tree never stops reading: it becomes an item with an ``error`` and the ``source:line``
where it starts, and ``TreeReadStats`` counts it (with the reasons) for the caller to print.
Paths of the form ``archive.zip/member`` read a member of a zip file (the NLTK treebank sample).
"""

from __future__ import annotations

import dataclasses
import os
import re
import zipfile
from collections.abc import Iterable, Iterator

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.data.text_files import DataError, ReadStats, decode_utf8
from t2t_repro.parsing.trees import Tree, TreeParseError, parse_bracket, parse_forest, tokenize


@dataclasses.dataclass
class TreeItem:
    """One tree read from a file, or why it could not be read (``blank``: an empty line)."""

    source: str
    line: int
    tree: Tree | None = None
    error: str | None = None
    blank: bool = False

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


@dataclasses.dataclass
class TreeReadStats(ReadStats):
    """Counts of a tree reading: good trees, malformed ones (skipped) and their ``file:line``
    reasons."""

    trees: int = 0
    malformed: int = 0
    problems: list = dataclasses.field(default_factory=list)
    max_problems_kept: int = 100

    def record(self, item: TreeItem) -> None:
        if item.tree is not None:
            self.trees += 1
        elif item.error is not None:
            self.malformed += 1
            if len(self.problems) < self.max_problems_kept:
                self.problems.append(f"{item.where}: malformed tree skipped: {item.error}")

    def summary(self) -> str:
        text = f"{self.trees:,} trees read, {self.malformed:,} malformed skipped"
        shown = "\n  ".join(self.problems)
        more = self.malformed - len(self.problems)
        return (
            text
            + (f"\n  {shown}" if shown else "")
            + (f"\n  ... and {more} more" if more > 0 else "")
        )


_DEPTH = {"(": 1, ")": -1}  # a bracket's change to the nesting depth


def _mrg_items(text: str, source: str, evalb_syntax: bool = False) -> Iterator[TreeItem]:
    """Trees delimited by bracket balance; stray text or closers become error items."""
    tokens = tokenize(text, evalb_syntax=evalb_syntax)
    pos = 0
    while pos < len(tokens):
        tok, line = tokens[pos]
        if tok != "(":
            end = pos
            while end < len(tokens) and tokens[end][0] != "(":
                end += 1
            what = "unmatched ')'" if tok == ")" else f"text outside brackets: {tok!r}"
            yield TreeItem(source, line, error=what)
            pos = end
            continue
        depth, end = 0, pos
        while end < len(tokens):
            depth += _DEPTH.get(tokens[end][0], 0)
            end += 1
            if depth == 0:
                break
        try:
            yield TreeItem(source, line, tree=parse_bracket(tokens[pos:end], 0, evalb_syntax)[0])
        except TreeParseError as e:
            detail = f" (at line {e.line})" if e.line and e.line != line else ""
            yield TreeItem(source, line, error=f"{e}{detail}")
        pos = end


def _line_items(text: str, source: str, evalb_syntax: bool = False) -> Iterator[TreeItem]:
    """One item per line. Only the newline that ends the file is dropped: a blank last line is a
    sentence (EVALB counts it as skipped), not the end of the file."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            yield TreeItem(source, number, blank=True)
            continue
        try:
            yield TreeItem(source, number, tree=parse_forest(line, number, evalb_syntax))
        except TreeParseError as e:
            yield TreeItem(source, number, error=str(e))


def detect_layout(text: str, source: str = "") -> str:
    """``mrg`` for ``.mrg`` files or text with an indented line, else ``lines``."""
    if source.endswith(".mrg") or re.search(r"^[ \t]+\S", text, re.MULTILINE):
        return "mrg"
    return "lines"


def iter_tree_items(
    text: str, source: str = "<text>", layout: str = "auto", evalb_syntax: bool = False
) -> Iterator[TreeItem]:
    """Every tree of ``text`` in order, malformed ones as error items (see module docstring).
    ``evalb_syntax``: read brackets as EVALB does (``trees.parse_bracket``), so that ``(NP)`` is a
    bracket without words (EVALB deletes it) and ``(NP )`` a word "", not malformed trees."""
    if layout == "auto":
        layout = detect_layout(text, source)
    if layout == "mrg":
        return _mrg_items(text, source, evalb_syntax)
    if layout == "lines":
        return _line_items(text, source, evalb_syntax)
    raise ValueError(f"unknown tree file layout {layout!r} (auto, lines or mrg)")


def read_text(path: str, stats: ReadStats | None = None) -> str:
    """A whole file (``path`` may be ``archive.zip/member``), UTF-8 with bad bytes replaced and
    counted."""
    if not fileio.isfile(path):
        zip_path, _, member = path.partition(".zip/")
        if member and os.path.isfile(zip_path + ".zip"):
            try:
                with zipfile.ZipFile(zip_path + ".zip") as z:
                    raw = z.read(member)
            except (KeyError, zipfile.BadZipFile) as e:
                raise DataError(f"Cannot read {path}: {e}") from None
            return decode_utf8(raw, stats).replace("\r\n", "\n")
        raise DataError(f"Missing tree file: {path}")
    with fileio.open(path, "rb") as f:
        return decode_utf8(f.read(), stats).replace("\r\n", "\n")


def read_tree_items(
    path: str,
    stats: TreeReadStats | None = None,
    layout: str = "auto",
    evalb_syntax: bool = False,
) -> list[TreeItem]:
    """All items of a tree file, blank lines (``lines`` layout) and malformed trees included,
    in order."""
    stats = stats if stats is not None else TreeReadStats()
    items = list(iter_tree_items(read_text(path, stats), path, layout, evalb_syntax))
    for item in items:
        stats.record(item)
    return items


def read_trees(path: str, stats: TreeReadStats | None = None, layout: str = "auto") -> list[Tree]:
    """The well-formed trees of a file; malformed ones are skipped and counted in ``stats``."""
    return [i.tree for i in read_tree_items(path, stats, layout) if i.tree is not None]


def trees_from_string(text: str, layout: str = "auto") -> list[Tree]:
    """Trees of a string; raises TreeParseError on the first malformed one (for tests and
    literals)."""
    out = []
    for item in iter_tree_items(text, "<string>", layout):
        if item.error:
            raise TreeParseError(item.error, item.line)
        if item.tree is not None:
            out.append(item.tree)
    return out


def write_tree_lines(path: str, trees: Iterable[Tree]) -> None:
    """One tree per line, written atomically (temp file + rename)."""
    fileio.makedirs_for(path)
    with atomic_open(path) as f:
        for tree in trees:
            f.write(tree.to_string() + "\n")
