"""Bracketed trees (reading, malformed-tree reports, normalisation) and T2T linearisation with
repairs."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest

from t2t_repro.parsing.linearize import delinearize, delinearize_with_repairs, linearize
from t2t_repro.parsing.tree_files import (
    TreeReadStats,
    read_tree_items,
    read_trees,
    trees_from_string,
)
from t2t_repro.parsing.trees import (
    Tree,
    TreeParseError,
    normalize,
    parse_forest,
    parse_tree,
    remove_root,
    strip_function_tags,
    tokenize,
)

PTB_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "ptb_sample" / "treebank.zip"

MRG = """( (S 
    (NP-SBJ-1 (NNP John) )
    (VP (VBD wanted) 
      (S 
        (NP-SBJ (-NONE- *-1) )
        (VP (TO to) 
          (VP (VB go) 
            (PP-DIR (-LRB- -LRB-) (IN to) (NP (NNP Rome) ) (-RRB- -RRB-) )))))
    (. .) ))
( (S 
    (NP-SBJ=2 (PRP He) )
    (VP (VBD left) ) 
    (. .) ))
"""
# By hand: trace (and the NP-SBJ it empties) gone, tags/indices cut, -LRB-/-RRB- kept, root removed.
MRG_NORMALIZED = [
    "(S (NP (NNP John)) (VP (VBD wanted) (S (VP (TO to) (VP (VB go) (PP (-LRB- -LRB-) (IN to) "
    "(NP (NNP Rome)) (-RRB- -RRB-)))))) (. .))",
    "(S (NP (PRP He)) (VP (VBD left)) (. .))",
]


def test_parse_and_print_one_line():
    text = "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"
    tree = parse_tree(text)
    assert tree.to_string() == text
    assert tree.words() == ["The", "cat", "sat", "."]
    assert tree.tags() == ["DT", "NN", "VBD", "."]
    assert tree.label == "S" and not tree.is_preterminal and tree.children[0].label == "NP"


def test_mrg_layout_and_normalisation():
    trees = trees_from_string(MRG)
    assert len(trees) == 2 and trees[0].label == ""  # the unlabelled treebank root
    assert [normalize(t).to_string() for t in trees] == MRG_NORMALIZED


def test_function_tags_and_special_labels():
    cases = {
        "NP-SBJ-1": "NP",
        "NP=2": "NP",
        "PP-LOC-CLR": "PP",
        "S-TPC-1": "S",
        "-NONE-": "-NONE-",
        "-LRB-": "-LRB-",
        "-RRB-": "-RRB-",
        "PRP$": "PRP$",
        "ADVP|PRT": "ADVP|PRT",
        "NP": "NP",
    }
    for label, expected in cases.items():
        assert strip_function_tags(label) == expected


def test_root_removal_and_trace_only_tree():
    assert remove_root(parse_tree("(TOP (S (NN a)))")).to_string() == "(S (NN a))"
    assert remove_root(parse_tree("(ROOT (S (NN a)))")).to_string() == "(S (NN a))"
    two = remove_root(parse_tree("( (S (NN a)) (. .))"))
    assert two.to_string() == "(TOP (S (NN a)) (. .))"
    assert normalize(parse_tree("( (S (NP (-NONE- *)) (VP (-NONE- *T*))))")) is None
    kept = normalize(parse_tree("(TOP (S-1 (NN a)))"), root=False)
    assert kept.to_string() == "(TOP (S (NN a)))"


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("(NN a b)", "more than one word"),
        ("(NP (DT a) b)", "beside subtrees"),
        ("(NP b (DT a))", "beside a subtree"),
        ("(S (NP (DT a))", "unclosed"),
        ("(S (NP))", "empty bracket"),
        ("(S (NN a)) x", "after the end"),
        ("hello", "outside brackets"),
    ],
)
def test_malformed_tree_raises(bad, reason):
    with pytest.raises(TreeParseError, match=reason):
        parse_tree(bad)


def test_evalb_syntax_reads_brackets_as_evalb_does():
    # evalb.c, read_line: the label is what follows "(" up to a space or bracket (maybe
    # nothing); a space, an optional word and ")" make a word, even an empty one.
    forest = parse_forest("(NP) () (NP ) ( ) ( a) (NP(DT\tb)) ( (S (NN c)))", evalb_syntax=True)
    assert [(c.label, c.word, len(c.children)) for c in forest.children] == [
        ("NP", None, 0),
        ("", None, 0),
        ("NP", "", 0),
        ("", "", 0),
        ("", "a", 0),
        ("NP", None, 1),
        ("", None, 1),
    ]
    assert forest.children[5].children[0].word == "b"
    assert tokenize("(NP\n)\n(DT a)", evalb_syntax=True) == [
        ("(", 1), ("NP", 1), ("", 1), (")", 2), ("(", 3), ("DT", 3), ("a", 3), (")", 3)
    ]  # fmt: skip
    # What EVALB cannot read stays malformed; without evalb_syntax "( a)" is a bracket "a".
    for bad in ("(NP (DT a) b)", "(S (NP (DT a))", "(NN a b)"):
        with pytest.raises(TreeParseError):
            parse_forest(bad, evalb_syntax=True)
    with pytest.raises(TreeParseError, match=r"empty bracket \(a\)"):
        parse_tree("(S ( a))")


def test_malformed_lines_are_skipped_counted_and_located(tmp_path):
    path = tmp_path / "trees.txt"
    path.write_text("(S (NN a))\n(NP (DT a) b)\n(NN a b)\n\n(S (NP (DT a))\n(S (NN c))\n")
    stats = TreeReadStats()
    trees = read_trees(str(path), stats)
    assert [t.to_string() for t in trees] == ["(S (NN a))", "(S (NN c))"]
    assert stats.trees == 2 and stats.malformed == 3
    assert [p.split(": ")[0] for p in stats.problems] == [f"{path}:2", f"{path}:3", f"{path}:5"]
    items = read_tree_items(str(path))  # every line is an item: positions never shift
    assert len(items) == 6 and items[3].blank and items[5].tree is not None
    assert "3 malformed skipped" in stats.summary()


def test_several_top_level_brackets_on_a_line_share_a_top_root(tmp_path):
    path = tmp_path / "forest.txt"
    path.write_text("(P this) (Q is)\n")  # EVALB reads such a line as two words, no brackets
    [tree] = read_trees(str(path))  # TOP, which EVALB deletes (even with --evalb_root)
    assert tree.label == "TOP" and tree.words() == ["this", "is"] and len(tree.children) == 2


def test_malformed_mrg_tree_reports_its_start_line(tmp_path):
    path = tmp_path / "bad.mrg"
    path.write_text("( (S (NN a) ))\n( (S\n   (NN a b) ))\n)\n( (S (NN c) ))\n")
    stats = TreeReadStats()
    trees = read_trees(str(path), stats)
    assert [t.to_string() for t in trees] == ["( (S (NN a)))", "( (S (NN c)))"]
    assert stats.malformed == 2
    assert stats.problems[0].startswith(f"{path}:2: ") and "(at line 3)" in stats.problems[0]
    assert stats.problems[1].startswith(f"{path}:4: ") and "unmatched ')'" in stats.problems[1]


def test_reads_a_zip_member(tmp_path):
    archive = tmp_path / "t.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("tb/wsj_0001.mrg", MRG)
    trees = read_trees(f"{archive}/tb/wsj_0001.mrg")
    assert [normalize(t).to_string() for t in trees] == MRG_NORMALIZED


# ----------------------------------------------------------------------------- linearisation

CAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"


def test_linearize_is_t2ts_format():
    assert linearize(parse_tree(CAT)) == ("The cat sat .", "S NP DT NN /NP VP VBD /VP . /S")
    assert linearize(parse_tree("(NN Hello)")) == ("Hello", "NN")


@pytest.mark.parametrize(
    "words, target, expected, fired",
    [
        # well-formed
        ("The cat sat .", "S NP DT NN /NP VP VBD /VP . /S", CAT, {}),
        # truncated: open constituents closed at the end, the missing '.' appended with its PTB tag
        (
            "The cat sat .",
            "S NP DT NN /NP VP VBD",
            "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))",
            {"closed_at_end": 2, "added_slots": 1},
        ),
        # an unmatched extra closer is dropped
        ("The cat sat .", "S NP DT NN /NP /NP VP VBD /VP . /S", CAT, {"dropped_closers": 1}),
        # a missing closer: /S closes the NP left open inside it
        (
            "The cat sat .",
            "S NP DT NN VP VBD /VP . /S",
            "(S (NP (DT The) (NN cat) (VP (VBD sat)) (. .)))",
            {"implicit_closes": 1},
        ),
        # a closer with the wrong label is dropped; the next outer closer closes its constituent
        (
            "The cat sat .",
            "S NP DT NN /VP VP VBD /VP . /S",
            "(S (NP (DT The) (NN cat) (VP (VBD sat)) (. .)))",
            {"dropped_closers": 1, "implicit_closes": 1},
        ),
        # a closer of a POS tag is dropped
        ("The cat sat .", "S NP DT /DT NN /NP VP VBD /VP . /S", CAT, {"dropped_closers": 1}),
        # more slots than words: extra slots dropped, then the VP they emptied
        (
            "The cat",
            "S NP DT NN /NP VP VBD /VP /S",
            "(S (NP (DT The) (NN cat)))",
            {"dropped_slots": 1, "dropped_empty": 1},
        ),
        # fewer slots than words
        (
            "The cat sat ,",
            "S NP DT NN /NP /S",
            "(S (NP (DT The) (NN cat)) (XX sat) (, ,))",
            {"added_slots": 2},
        ),
        # an empty constituent is removed
        ("The cat", "S NP /NP NP DT NN /NP /S", "(S (NP (DT The) (NN cat)))", {"dropped_empty": 1}),
        # several top-level constituents get a TOP root
        (
            "The cat sat",
            "NP DT NN /NP VP VBD /VP",
            "(TOP (NP (DT The) (NN cat)) (VP (VBD sat)))",
            {"wrapped_root": 1},
        ),
        # an empty output still covers every word
        ("a b", "", "(TOP (XX a) (XX b))", {"wrapped_root": 1, "added_slots": 2}),
        # a one-word sentence
        ("Hello", "NN", "(NN Hello)", {}),
    ],
)
def test_delinearize_repairs(words, target, expected, fired):
    tree, repairs = delinearize_with_repairs(words, target)
    assert tree.to_string() == expected
    counts = {k: v for k, v in repairs.as_dict().items() if v and k != "sentences_repaired"}
    assert counts == fired
    assert repairs.sentences_repaired == (1 if fired else 0)


def test_delinearize_always_keeps_the_words():
    rng = random.Random(5)
    vocab = [
        "S",
        "NP",
        "VP",
        "PP",
        "/S",
        "/NP",
        "/VP",
        "/PP",
        "/",
        "DT",
        "NN",
        "VBD",
        "IN",
        ",",
        "/DT",
        "FOO",
    ]
    for _ in range(300):
        words = [f"w{i}" for i in range(rng.randint(1, 8))]
        target = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 20)))
        tree = delinearize(words, target)
        assert tree.words() == words, target
        assert parse_tree(tree.to_string()) == tree  # always printable, well-formed brackets


@pytest.mark.slow
def test_round_trip_on_every_ptb_sample_tree():
    if not PTB_SAMPLE.is_file():
        pytest.skip(f"{PTB_SAMPLE} is absent (shared fixture data; see ../shared/data/README.md)")
    count = 0
    with zipfile.ZipFile(PTB_SAMPLE) as z:
        for name in sorted(n for n in z.namelist() if n.endswith(".mrg")):
            for raw in trees_from_string(z.read(name).decode("utf-8"), layout="mrg"):
                tree = normalize(raw)
                source, target = linearize(tree)
                back, repairs = delinearize_with_repairs(source, target)
                assert back == tree and repairs.total() == 0, (name, tree)
                assert isinstance(back, Tree)
                count += 1
    assert count > 3800  # the sample holds about 3,900 trees
