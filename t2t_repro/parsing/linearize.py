"""Trees <-> the sequences a seq2seq parser reads and writes, exactly T2T's format
(``tensor2tensor/data_generators/wsj_parsing.py``, ``words_and_tags_from_wsj_tree``).

``linearize(tree)`` gives ``(source, target)``: the source is the words joined by single spaces;
the target is a depth-first walk where every constituent emits its label when opened and
``/LABEL`` when closed, and every preterminal emits only its POS tag (words never appear and POS
tags have no closer). The outer ``TOP`` is not part of the sequence: trees are linearised after
``trees.normalize`` removed it. Example::

    (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))
    source: The cat sat .
    target: S NP DT NN /NP VP VBD /VP . /S

``delinearize(words, target)`` inverts this and ALWAYS returns a tree whose words are exactly
``words``, whatever the model produced. A token is a closer if it starts with ``/``, a POS slot
if it is one of ``pos_tags`` (default: the Penn Treebank tag set, which is disjoint from the
phrase labels), and otherwise opens a constituent. Ill-formed output is repaired by these rules,
applied in this order, each counted in ``Repairs``:

1. ``/X`` closes the innermost open ``X``; constituents opened inside it that are still open are
   closed there too (their closers were missing: *implicit closes*). A closer with no open ``X``
   (unmatched, wrong label, or ``/`` + a POS tag) is dropped.
2. Constituents still open at the end are closed at the end, innermost first.
3. A constituent without children (``NP /NP``, or emptied by rule 4) is removed.
4. With more POS slots than words, the slots after the ``len(words)``-th are dropped.
5. Unless the result is a single constituent (or a single preterminal for a one-word
   sentence), everything is wrapped in a ``TOP`` root (EVALB ignores ``TOP``).
6. With fewer POS slots than words, the missing words are appended at the end of the root
   as ``(XX word)`` (``default_tag``), except punctuation, which gets its Penn Treebank tag
   (``PUNCTUATION_TAGS``: ``, . : `` ''``) so that EVALB deletes it as it does in the gold tree
   instead of reporting a length mismatch.
7. Words fill the slots left to right.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from t2t_repro.parsing.trees import Tree

# The 45 Penn Treebank POS tags (with both bracket spellings) and the trace tag.
PTB_POS_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM TO UH "
    "VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB # $ . , : `` '' -LRB- -RRB- ( ) -NONE-".split()
)
# The Penn Treebank's phrase labels (after function tags are stripped).
PTB_PHRASE_LABELS = tuple(
    "ADJP ADVP CONJP FRAG INTJ LST NAC NP NX PP PRN PRT QP RRC S SBAR SBARQ SINV SQ UCP VP "
    "WHADJP WHADVP WHNP WHPP X".split()
)
DEFAULT_TAG = "XX"
PUNCTUATION_TAGS = {
    ",": ",",
    ".": ".",
    "?": ".",
    "!": ".",
    ":": ":",
    ";": ":",
    "--": ":",
    "-": ":",
    "...": ":",
    "``": "``",
    "`": "``",
    "''": "''",
}
ROOT_LABEL = "TOP"


def target_tokens(tree: Tree) -> list[str]:
    """The target sequence of ``tree`` as tokens (module docstring)."""
    out: list[str] = []

    def walk(node: Tree) -> None:
        out.append(node.label)
        if node.is_preterminal:
            return
        for child in node.children:
            walk(child)
        out.append("/" + node.label)

    walk(tree)
    return out


def target_inventory(targets: Iterable[str]) -> list[str]:
    """Target tokens for a one-id-per-token vocabulary: the PTB tags, labels and closers, then
    every other token of ``targets`` (linearised trees), most frequent first."""
    fixed = (
        sorted(PTB_POS_TAGS)
        + list(PTB_PHRASE_LABELS)
        + ["/" + label for label in PTB_PHRASE_LABELS]
    )
    known = set(fixed)
    counts = Counter(t for line in targets for t in line.split() if t not in known)
    return fixed + sorted(counts, key=lambda t: (-counts[t], t))


def linearize(tree: Tree) -> tuple[str, str]:
    """``(source, target)`` strings of a normalised tree: words, and T2T's label/closer sequence."""
    return " ".join(tree.words()), " ".join(target_tokens(tree))


@dataclasses.dataclass
class Repairs:
    """How many times each repair rule of ``delinearize`` fired (summed over sentences by
    ``add``)."""

    dropped_closers: int = 0
    implicit_closes: int = 0
    closed_at_end: int = 0
    dropped_empty: int = 0
    dropped_slots: int = 0
    added_slots: int = 0
    wrapped_root: int = 0
    sentences_repaired: int = 0

    def total(self) -> int:
        return sum(v for k, v in dataclasses.asdict(self).items() if k != "sentences_repaired")

    def add(self, other: Repairs) -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class _Open:
    __slots__ = ("label", "children")

    def __init__(self, label: str):
        self.label = label
        self.children: list[Tree] = []


def _close(stack: list[_Open], repairs: Repairs) -> None:
    node = stack.pop()
    if node.children:
        stack[-1].children.append(Tree(node.label, node.children))
    else:
        repairs.dropped_empty += 1


def _keep_slots(node: Tree, budget: list[int], repairs: Repairs) -> Tree | None:
    """``node`` with only the first ``budget[0]`` POS slots kept; None if nothing is left."""
    if node.is_preterminal:
        if budget[0] > 0:
            budget[0] -= 1
            return node
        repairs.dropped_slots += 1
        return None
    kept = [
        c for c in (_keep_slots(child, budget, repairs) for child in node.children) if c is not None
    ]
    if not kept:
        repairs.dropped_empty += 1
        return None
    node.children = kept
    return node


def delinearize_with_repairs(
    words: Sequence[str] | str,
    target: str,
    pos_tags: Collection[str] = PTB_POS_TAGS,
    default_tag: str = DEFAULT_TAG,
) -> tuple[Tree, Repairs]:
    """A tree over exactly ``words`` from a (possibly ill-formed) target string, and the repairs
    made."""
    words = words.split() if isinstance(words, str) else list(words)
    repairs = Repairs()
    stack = [_Open("")]  # stack[0] collects the top level
    for token in target.split():
        if token.startswith("/"):
            label = token[1:]
            depth = next((i for i in range(len(stack) - 1, 0, -1) if stack[i].label == label), 0)
            if depth == 0:
                repairs.dropped_closers += 1
                continue
            while len(stack) - 1 > depth:
                repairs.implicit_closes += 1
                _close(stack, repairs)
            _close(stack, repairs)
        elif token in pos_tags:
            stack[-1].children.append(Tree(token, word=""))
        else:
            stack.append(_Open(token))
    while len(stack) > 1:
        repairs.closed_at_end += 1
        _close(stack, repairs)

    top = stack[0].children
    slots = sum(len(t.preterminals()) for t in top)
    if slots > len(words):
        budget = [len(words)]
        top = [t for t in (_keep_slots(t, budget, repairs) for t in top) if t is not None]
    single_word = len(top) == 1 and top[0].is_preterminal and len(words) == 1
    if len(top) == 1 and (not top[0].is_preterminal or single_word):
        root = top[0]
    else:
        repairs.wrapped_root += 1
        root = Tree(ROOT_LABEL, top)
    for word in words[len(root.preterminals()) :]:
        repairs.added_slots += 1
        root.children.append(Tree(PUNCTUATION_TAGS.get(word, default_tag), word=""))
    for slot, word in zip(root.preterminals(), words, strict=False):
        slot.word = word
    repairs.sentences_repaired = int(repairs.total() > 0)
    return root, repairs


def delinearize(
    words: Sequence[str] | str,
    target: str,
    pos_tags: Collection[str] = PTB_POS_TAGS,
    default_tag: str = DEFAULT_TAG,
) -> Tree:
    """A tree over exactly ``words`` from a target string, repaired as the module docstring says."""
    return delinearize_with_repairs(words, target, pos_tags, default_tag)[0]


def trees_from_linearized(
    word_lines: Sequence[str], target_lines: Sequence[str], pos_tags: Collection[str] = PTB_POS_TAGS
) -> tuple[list[Tree], Repairs]:
    """Delinearise a decoded file against its source lines; returns the trees and the summed
    repairs."""
    if len(word_lines) != len(target_lines):
        raise ValueError(f"{len(word_lines)} sentences but {len(target_lines)} parser outputs")
    total, trees = Repairs(), []
    for words, target in zip(word_lines, target_lines, strict=True):
        tree, repairs = delinearize_with_repairs(words, target, pos_tags)
        trees.append(tree)
        total.add(repairs)
    return trees, total
