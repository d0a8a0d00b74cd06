"""Penn Treebank bracketed trees: a small ``Tree`` type, a strict parser and normalisation.

``parse_tree`` reads one bracketed tree (on one line or several), with or without the
treebank's unlabelled root ``( (S ...) )``; malformed brackets (unbalanced, two words in one
bracket, words beside subtrees, an empty bracket, text outside brackets) raise
``TreeParseError`` with the line where the problem is. Files are read by ``tree_files``.

``normalize`` prepares treebank trees for parsing experiments: ``-NONE-`` traces are removed with
the constituents they leave empty, function tags and indices are stripped (``NP-SBJ-1`` -> ``NP``,
``NP=2`` -> ``NP``; ``-NONE-``, ``-LRB-``, ``-RRB-`` are kept whole) and an unlabelled, ``TOP`` or
``ROOT`` root with a single child is removed (one with several children becomes ``TOP``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import repeat

from t2t_repro.errors import UserError

ROOT_LABELS = frozenset({"", "TOP", "ROOT"})
TRACE_TAG = "-NONE-"
_TOKEN_RE = re.compile(r"\(|\)|[^\s()]+")


class Tree:
    """A constituent: ``label`` plus children, or a preterminal: ``label`` (the POS tag) plus
    ``word``."""

    __slots__ = ("label", "children", "word")

    def __init__(self, label: str, children: Iterable[Tree] = (), word: str | None = None):
        self.label = label
        self.children: list[Tree] = list(children)
        self.word = word
        if word is not None and self.children:
            raise ValueError("a preterminal has a word and no children")

    @property
    def is_preterminal(self) -> bool:
        return self.word is not None

    def preterminals(self) -> list[Tree]:
        """The (tag, word) leaves, left to right."""
        if self.is_preterminal:
            return [self]
        out: list[Tree] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if node.is_preterminal:
                out.append(node)
            else:
                stack.extend(reversed(node.children))
        return out

    def words(self) -> list[str]:
        return [p.word for p in self.preterminals()]

    def tags(self) -> list[str]:
        return [p.label for p in self.preterminals()]

    def copy(self) -> Tree:
        if self.is_preterminal:
            return Tree(self.label, word=self.word)
        return Tree(self.label, [c.copy() for c in self.children])

    def to_string(self) -> str:
        """One-line brackets, ``(S (NP (DT The) (NN cat)) (VP (VBD sat)))``."""
        if self.is_preterminal:
            return f"({self.label} {self.word})"
        return f"({self.label} " + " ".join(c.to_string() for c in self.children) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tree) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"Tree({self.to_string()!r})"


class TreeParseError(UserError, ValueError):
    """Malformed brackets; ``line`` is where the problem was found (1-based, or 0 if unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


# ----------------------------------------------------------------------------- parsing


def tokenize(text: str, first_line: int = 1, evalb_syntax: bool = False) -> list[tuple[str, int]]:
    """Bracket and atom tokens of ``text``, each with its 1-based line number (``evalb_syntax``:
    EVALB's tokens, see ``_evalb_tokens``)."""
    if evalb_syntax:
        return _evalb_tokens(text, first_line)
    out = []
    for line, chunk in enumerate(text.split("\n"), first_line):
        out.extend(zip(_TOKEN_RE.findall(chunk), repeat(line)))  # no groups: whole matches
    return out


# EVALB's reader (evalb.c, read_line): the label is what follows "(" up to a space or bracket,
# possibly nothing; a space after it, an optional word and ")" make a word. So "(NP )" is the
# word "" tagged NP, "( a)" the word "a" with an empty tag, "(NP)" and "()" empty brackets.
_EVALB_TOKEN_RE = re.compile(r"\(([^\s()]*)(?:\s+([^\s()]*)(?=\)))?|\)|[^\s()]+")


def _evalb_tokens(text: str, first_line: int) -> list[tuple[str, int]]:
    """Tokens as EVALB reads them: every "(" is followed by its label token (``""`` when it has
    none) and, for a word, the word token (which may be ``""``)."""
    out, line, last = [], first_line, 0
    for m in _EVALB_TOKEN_RE.finditer(text):
        line, last = line + text.count("\n", last, m.start()), m.start()
        if m.group(0).startswith("("):
            out += [("(", line), (m.group(1), line)]
            if m.group(2) is not None:
                out.append((m.group(2), line))
        else:
            out.append((m.group(0), line))
    return out


def parse_bracket(
    tokens: list[tuple[str, int]], pos: int, evalb_syntax: bool = False
) -> tuple[Tree, int]:
    """Parse the bracket starting at ``tokens[pos]`` (a ``(``); returns the tree and the next
    position. ``evalb_syntax`` (tokens from ``tokenize(..., evalb_syntax=True)``): read as EVALB
    does, so ``(NP)`` is a constituent without children and ``( a)`` a word with an empty tag,
    instead of errors."""
    open_line = tokens[pos][1]
    pos += 1
    if pos >= len(tokens):
        raise TreeParseError("unclosed bracket", open_line)
    label = ""
    if tokens[pos][0] not in ("(", ")"):
        label, pos = tokens[pos][0], pos + 1
    children: list[Tree] = []
    word = None
    while True:
        if pos >= len(tokens):
            raise TreeParseError(
                f"unclosed bracket ({label or 'unlabelled'}) opened on line {open_line}",
                tokens[-1][1],
            )
        tok, line = tokens[pos]
        if tok == ")":
            break
        if tok == "(":
            if word is not None:
                raise TreeParseError(f"word {word!r} beside a subtree in ({label}", line)
            child, pos = parse_bracket(tokens, pos, evalb_syntax)
            children.append(child)
            continue
        if children:
            raise TreeParseError(f"word {tok!r} beside subtrees in ({label}", line)
        if word is not None:
            raise TreeParseError(f"more than one word in ({label} {word} {tok}", line)
        word, pos = tok, pos + 1
    if word is None and not children and not evalb_syntax:
        raise TreeParseError(f"empty bracket ({label})", open_line)
    if word is not None and not label and not evalb_syntax:
        raise TreeParseError(f"word {word!r} without a POS tag", open_line)
    return (Tree(label, word=word) if word is not None else Tree(label, children)), pos + 1


def parse_tree(text: str, first_line: int = 1) -> Tree:
    """Exactly one bracketed tree (possibly spanning lines); raises TreeParseError otherwise."""
    tokens = tokenize(text, first_line)
    if not tokens:
        raise TreeParseError("no tree", first_line)
    if tokens[0][0] != "(":
        raise TreeParseError(f"text outside brackets: {tokens[0][0]!r}", tokens[0][1])
    tree, pos = parse_bracket(tokens, 0)
    if pos < len(tokens):
        raise TreeParseError(f"text after the end of the tree: {tokens[pos][0]!r}", tokens[pos][1])
    return tree


FOREST_ROOT = "TOP"  # EVALB deletes TOP brackets, so the forest root is no bracket


def parse_forest(text: str, first_line: int = 1, evalb_syntax: bool = False) -> Tree:
    """Like ``parse_tree``, but several top-level brackets (``(P a) (Q b)``, which EVALB accepts
    as words without a root bracket) become the children of a ``TOP`` root; ``evalb_syntax`` as
    in ``parse_bracket``."""
    tokens = tokenize(text, first_line, evalb_syntax)
    trees, pos = [], 0
    while pos < len(tokens):
        if tokens[pos][0] != "(":
            raise TreeParseError(f"text outside brackets: {tokens[pos][0]!r}", tokens[pos][1])
        tree, pos = parse_bracket(tokens, pos, evalb_syntax)
        trees.append(tree)
    if not trees:
        raise TreeParseError("no tree", first_line)
    return trees[0] if len(trees) == 1 else Tree(FOREST_ROOT, trees)


# ----------------------------------------------------------------------------- normalisation


def strip_function_tags(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``, ``PP-LOC`` -> ``PP``; ``-NONE-``/``-LRB-`` kept
    whole."""
    if len(label) > 2 and label.startswith("-") and label.endswith("-"):
        return label
    for i, ch in enumerate(label):
        if i > 0 and ch in "-=":
            return label[:i]
    return label


def strip_traces(tree: Tree) -> Tree | None:
    """The tree without ``-NONE-`` leaves and the constituents left empty; None if nothing is
    left."""
    if tree.is_preterminal:
        return None if tree.label == TRACE_TAG else Tree(tree.label, word=tree.word)
    kept = [c for c in (strip_traces(child) for child in tree.children) if c is not None]
    return Tree(tree.label, kept) if kept else None


def relabel(tree: Tree, fn: Callable[[str], str]) -> Tree:
    """A copy with every label (POS tags included) mapped through ``fn``."""
    if tree.is_preterminal:
        return Tree(fn(tree.label), word=tree.word)
    return Tree(fn(tree.label), [relabel(c, fn) for c in tree.children])


def remove_root(tree: Tree) -> Tree:
    """Unwrap an unlabelled/``TOP``/``ROOT`` root with one child (repeatedly); else keep it, as
    ``TOP``."""
    while not tree.is_preterminal and tree.label in ROOT_LABELS and len(tree.children) == 1:
        tree = tree.children[0]
    if not tree.is_preterminal and tree.label in ROOT_LABELS:
        tree = Tree("TOP", tree.children)
    return tree


def normalize(
    tree: Tree, traces: bool = True, function_tags: bool = True, root: bool = True
) -> Tree | None:
    """Strip traces, function tags and the root as chosen (module docstring); None if only
    traces."""
    out: Tree | None = tree
    if traces:
        out = strip_traces(out)
        if out is None:
            return None
    if function_tags:
        out = relabel(out, strip_function_tags)
    if root:
        out = remove_root(out)
    return out
