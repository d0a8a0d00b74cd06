"""Seeded perturbations of a gold tree into a test line, for comparing t2t-evalb with EVALB.

Each kind is a function ``(gold, rng) -> (gold_line, test_line)`` over a copy of the gold tree;
most leave the gold line as the tree's one-line form. They cover what parser output and
hand-edited files do to EVALB: wrong labels, missing, extra and moved brackets, wrong tags,
punctuation tagged as words and words tagged as punctuation, empty brackets, blank lines, roots,
traces, function tags, length and word mismatches. ``line_of`` writes ``(NP)`` for a
constituent without children (``Tree.to_string`` would write ``(NP )``, which EVALB reads as a
word).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from t2t_repro.parsing.trees import Tree, parse_forest

PUNCT_TAGS = (",", ".", ":", "``", "''")
LABELS = ("NP", "VP", "PP", "S", "SBAR", "ADJP", "ADVP", "PRT", "QP", "WHNP", "PRN", "FRAG")
WORD_TAGS = ("NN", "NNS", "VB", "VBD", "JJ", "RB", "IN", "DT", "CD", "PRP")


def line_of(tree: Tree) -> str:
    if tree.is_preterminal:
        return f"({tree.label} {tree.word})"
    if not tree.children:
        return f"({tree.label})"
    return f"({tree.label} " + " ".join(line_of(c) for c in tree.children) + ")"


def _nodes(tree: Tree, root: bool = True) -> list[tuple[Tree, Tree | None, int]]:
    """(node, parent, index in parent) of every constituent that is not a preterminal."""
    out, stack = [], [(tree, None, 0)]
    while stack:
        node, parent, i = stack.pop()
        if node.is_preterminal:
            continue
        if root or parent is not None:
            out.append((node, parent, i))
        stack.extend((c, node, j) for j, c in enumerate(node.children))
    return out


def _leaves(tree: Tree, parent: Tree | None = None) -> list[tuple[Tree, Tree]]:
    """(preterminal, parent) pairs left to right."""
    if tree.is_preterminal:
        return [(tree, parent)] if parent is not None else []
    out = []
    for child in tree.children:
        out.extend(_leaves(child, tree))
    return out


def _pick(rng: random.Random, items: list):
    return items[rng.randrange(len(items))] if items else None


def _same(gold: Tree, test: Tree) -> tuple[str, str]:
    return line_of(gold), line_of(test)


def identity(gold, rng):
    return _same(gold, gold)


def relabel(gold, rng):
    test = gold.copy()
    node, _, _ = _pick(rng, _nodes(test))
    node.label = rng.choice([x for x in LABELS if x != node.label])
    return _same(gold, test)


def advp_prt(gold, rng):
    """ADVP and PRT are equal labels (EQ_LABEL): swap them, or relabel a node to one of them."""
    test = gold.copy()
    nodes = [n for n, _, _ in _nodes(test) if n.label in ("ADVP", "PRT")]
    for node in nodes:
        node.label = "PRT" if node.label == "ADVP" else "ADVP"
    if not nodes:
        node, _, _ = _pick(rng, _nodes(test))
        node.label = rng.choice(("ADVP", "PRT"))
    return _same(gold, test)


def drop_bracket(gold, rng):
    test = gold.copy()
    found = _pick(rng, _nodes(test, root=False))
    if found:
        node, parent, i = found
        parent.children[i : i + 1] = node.children
    return _same(gold, test)


def insert_bracket(gold, rng):
    test = gold.copy()
    node, _, _ = _pick(rng, [found for found in _nodes(test) if found[0].children])
    i = rng.randrange(len(node.children))
    j = rng.randrange(i + 1, len(node.children) + 1)
    node.children[i:j] = [Tree(rng.choice(LABELS), node.children[i:j])]
    return _same(gold, test)


def move_boundary(gold, rng):
    """A constituent takes in its right sibling (or that sibling's first child), or is taken
    into the constituent on its right."""
    test = gold.copy()
    moves = []
    for node, _, _ in _nodes(test):
        for k in range(len(node.children) - 1):
            left, right = node.children[k], node.children[k + 1]
            if not left.is_preterminal and (right.is_preterminal or right.children):
                moves.append((node, k, "left grows"))
            if not right.is_preterminal:
                moves.append((node, k, "right grows"))
    found = _pick(rng, moves)
    if found:
        node, k, how = found
        left, right = node.children[k], node.children[k + 1]
        if how == "right grows":
            right.children.insert(0, node.children.pop(k))
        elif right.is_preterminal:
            left.children.append(node.children.pop(k + 1))
        else:
            left.children.append(right.children.pop(0))
    return _same(gold, test)


def unary_duplicate(gold, rng):
    """``NP -> NP``: a duplicated bracket, in the test tree and, half the time, in both."""
    test = gold.copy()
    node, parent, i = _pick(rng, _nodes(test, root=False)) or (None, None, 0)
    if node is not None:
        parent.children[i] = Tree(node.label, [node])
        if rng.random() < 0.5:
            return line_of(test), line_of(test)
    return _same(gold, test)


def flatten(gold, rng):
    test = Tree(gold.label or "S", [leaf.copy() for leaf, _ in _leaves(gold)])
    return _same(gold, test)


def right_branching(gold, rng):
    leaves = [leaf.copy() for leaf, _ in _leaves(gold)]
    tree = Tree("X", leaves[-2:])
    for leaf in reversed(leaves[:-2]):
        tree = Tree(rng.choice(LABELS), [leaf, tree])
    return _same(gold, tree)


def retag(gold, rng):
    test = gold.copy()
    found = _pick(rng, [leaf for leaf, _ in _leaves(test) if leaf.label not in PUNCT_TAGS])
    if found:
        found.label = rng.choice([t for t in WORD_TAGS if t != found.label])
    return _same(gold, test)


def punct_as_word(gold, rng):
    """A punctuation mark tagged as a word: one word more than gold (Length unmatch)."""
    test = gold.copy()
    found = _pick(rng, [leaf for leaf, _ in _leaves(test) if leaf.label in PUNCT_TAGS])
    if found:
        found.label = "NN"
    return _same(gold, test)


def word_as_punct(gold, rng):
    """A word tagged ``,``: deleted, one word fewer than gold (Length unmatch)."""
    test = gold.copy()
    found = _pick(rng, [leaf for leaf, _ in _leaves(test) if leaf.label not in PUNCT_TAGS])
    if found:
        found.label = rng.choice(PUNCT_TAGS)
    return _same(gold, test)


def punct_changes(gold, rng):
    """Punctuation moved between tags EVALB deletes, dropped, or added: no word changes."""
    test = gold.copy()
    for leaf, _ in _leaves(test):
        if leaf.label in PUNCT_TAGS and rng.random() < 0.5:
            leaf.label = rng.choice(PUNCT_TAGS)
    pairs = [(leaf, p) for leaf, p in _leaves(test) if leaf.label in PUNCT_TAGS]
    if pairs and rng.random() < 0.5:
        leaf, parent = rng.choice(pairs)
        if len(parent.children) > 1:
            parent.children.remove(leaf)
    node, _, _ = _pick(rng, _nodes(test))
    node.children.insert(rng.randrange(len(node.children) + 1), Tree(",", word=","))
    return _same(gold, test)


def empty_bracket(gold, rng):
    """``(NP)`` (and ``(PP (NP))``) in the test tree: zero-span brackets, which EVALB deletes."""
    test = gold.copy()
    for _ in range(rng.randint(1, 2)):
        node, _, _ = _pick(rng, _nodes(test))
        empty = Tree(rng.choice(LABELS), [])
        if rng.random() < 0.3:
            empty = Tree("PP", [empty])
        node.children.insert(rng.randrange(len(node.children) + 1), empty)
    return _same(gold, test)


def empty_bracket_spaced(gold, rng):
    """``(NP )``: EVALB reads a word "" tagged NP here, unlike ``(NP)``."""
    gold_line, test_line = _same(gold, gold)
    cut = test_line.rfind(")")
    return gold_line, test_line[:cut] + " (NP ))"


def blank_test(gold, rng):
    return line_of(gold), ""


def blank_both(gold, rng):
    return "", ""


def blank_gold(gold, rng):
    return "", line_of(gold)


def unlabelled_root(gold, rng):
    """The .mrg root ``( (S ...) )`` around the test tree only."""
    return _same(gold, Tree("", [gold.copy()]))


def unlabelled_root_both(gold, rng):
    wrapped = Tree("", [gold.copy()])
    return _same(wrapped, wrapped)


def top_root(gold, rng):
    return _same(gold, Tree("TOP", [gold.copy()]))


def forest(gold, rng):
    """The root's children as separate top-level brackets (no root bracket)."""
    if gold.is_preterminal or len(gold.children) < 2:
        return _same(gold, gold)
    return line_of(gold), " ".join(line_of(c) for c in gold.children)


def function_tags(gold, rng):
    test = gold.copy()
    for node, _, _ in _nodes(test):
        if node.label and rng.random() < 0.4:
            node.label += rng.choice(("-SBJ", "-TMP-1", "=2", "-LOC=3"))
    return _same(gold, test)


def traces(gold, rng):
    """``-NONE-`` leaves (deleted, not counted in the length), alone or in their own NP."""
    test = gold.copy()
    for _ in range(rng.randint(1, 3)):
        node, _, _ = _pick(rng, _nodes(test))
        trace = Tree("-NONE-", word=rng.choice(("*", "*T*-1", "0", "*U*")))
        if rng.random() < 0.5:
            trace = Tree("NP-SBJ", [trace])
        node.children.insert(rng.randrange(len(node.children) + 1), trace)
    return _same(gold, test)


def drop_word(gold, rng):
    test = gold.copy()
    pairs = [(leaf, p) for leaf, p in _leaves(test) if leaf.label not in PUNCT_TAGS]
    leaf, parent = rng.choice(pairs)
    if len(parent.children) > 1:
        parent.children.remove(leaf)
    else:
        leaf.label = "."
    return _same(gold, test)


def add_word(gold, rng):
    test = gold.copy()
    node, _, _ = _pick(rng, _nodes(test))
    node.children.insert(rng.randrange(len(node.children) + 1), Tree("NN", word="extra"))
    return _same(gold, test)


def change_word(gold, rng):
    test = gold.copy()
    leaf = _pick(rng, [leaf for leaf, _ in _leaves(test) if leaf.label not in PUNCT_TAGS])
    leaf.word = leaf.word + "s"
    return _same(gold, test)


def spacing(gold, rng):
    """Tabs, runs of spaces, and no space between brackets (``)(``, ``(NP(DT``)."""
    gold_line, test_line = _same(gold, gold)
    out = []
    for ch in test_line:
        if ch == " ":
            ch = rng.choice((" ", "  ", "\t", " \t "))
        out.append(ch)
    test_line = "".join(out)
    if rng.random() < 0.5:
        test_line = test_line.replace(") (", ")(").replace(" (", "(")
    return gold_line, test_line


def line_ends(gold, rng):
    """Trailing white space and Windows line ends (``\\r\\n``) on either line."""
    gold_line, test_line = _same(gold, gold)
    ends = ("\r", " ", "\t", " \r", "")
    return gold_line + rng.choice(ends), test_line + rng.choice(ends)


def only_punctuation(gold, rng):
    """A test tree whose words are all deleted ones: EVALB skips it, as an empty line."""
    return line_of(gold), "(S (NP (, ,) (-NONE- *)) (. .))"


def unlabelled_preterminal(gold, rng):
    """``( word)``: a word with an empty tag (a wrong tag for EVALB)."""
    test = gold.copy()
    leaf = _pick(rng, [leaf for leaf, _ in _leaves(test) if leaf.label not in PUNCT_TAGS])
    leaf.label = ""
    return _same(gold, test)


def unlabelled_empty(gold, rng):
    """``()`` (an empty bracket) and ``( )`` (a word "" with an empty tag, so one word more)."""
    gold_line, test_line = _same(gold, gold)
    cut = test_line.rfind(")")
    return gold_line, test_line[:cut] + rng.choice((" ()", " ( )", " (NP ())")) + ")"


def odd_labels(gold, rng):
    """Labels EVALB cuts at a leading ``-`` or ``=``, phrase labels that are deleted POS labels
    (``.``, ``TOP-1``), and POS tags with function tags (never cut), in both trees."""
    gold, test = gold.copy(), gold.copy()
    for tree in (gold, test):
        r = random.Random(rng.random())
        for node, _, _ in _nodes(tree):
            if r.random() < 0.3:
                node.label = r.choice(("-X-", "=1", "NP=2-3", "PP-", ".", "TOP-1", "-NONE-", ","))
        for leaf, _ in _leaves(tree):
            if leaf.label not in PUNCT_TAGS and r.random() < 0.2:
                leaf.label = r.choice(("NN-1", "ADVP", "PRT", "TOP", "DT=2"))
    return _same(gold, test)


def single_word(gold, rng):
    """A one-word sentence, gold and test; the test's root is the preterminal alone."""
    leaf = _leaves(gold)[0][0]
    return f"(S (NP {line_of(leaf)}))", line_of(leaf)


def unbalanced(gold, rng):
    """A closing bracket missing (at the end or inside): a line that is not a tree."""
    gold_line, test_line = _same(gold, gold)
    # A phrase's closer: EVALB cannot read a word after a bracket left open by a missing
    # preterminal closer at all (it stops).
    closers = [i for i, ch in enumerate(test_line) if ch == ")" and test_line[i - 1] == ")"]
    cut = closers[-1] if rng.random() < 0.5 else rng.choice(closers)
    return gold_line, test_line[:cut] + test_line[cut + 1 :]


STRUCTURAL = (relabel, drop_bracket, insert_bracket, move_boundary, retag, unary_duplicate)


def many_changes(gold, rng):
    """Three to six structural changes on top of each other."""
    test = gold
    for _ in range(rng.randint(3, 6)):
        op = rng.choice(STRUCTURAL)
        test = parse_forest(op(test, rng)[1], 1, True)  # empty brackets allowed
    return _same(gold, test)


KINDS: dict[str, Callable] = {
    f.__name__: f
    for f in (
        identity,
        relabel,
        advp_prt,
        drop_bracket,
        insert_bracket,
        move_boundary,
        unary_duplicate,
        flatten,
        right_branching,
        retag,
        punct_as_word,
        word_as_punct,
        punct_changes,
        empty_bracket,
        empty_bracket_spaced,
        blank_test,
        blank_both,
        blank_gold,
        unlabelled_root,
        unlabelled_root_both,
        top_root,
        forest,
        function_tags,
        traces,
        drop_word,
        add_word,
        change_word,
        many_changes,
        spacing,
        line_ends,
        only_punctuation,
        unlabelled_preterminal,
        unlabelled_empty,
        odd_labels,
        single_word,
        unbalanced,
    )
}
