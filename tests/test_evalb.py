"""EVALB with COLLINS.prm on hand-scored tree pairs, file scoring and the t2t-evalb tool.

Every expected number is counted by hand in the comment above it: gold brackets, test
brackets, matched brackets (spans are over the words left after punctuation is deleted).
"""

from __future__ import annotations

import json

import pytest

from t2t_repro.commands import evalb as evalb_tool
from t2t_repro.data.text_files import DataError
from t2t_repro.parsing.evalb import (
    ERROR,
    OK,
    SKIP,
    EvalbParams,
    align_punctuation,
    evaluate,
    score_sentence,
)
from t2t_repro.parsing.scoring import format_report, score_files
from t2t_repro.parsing.trees import parse_tree
from tests.tools import run_tool

CAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"  # S[0,3] NP[0,2] VP[2,3]; '.' deleted


def score(gold: str, test: str | None, **kw):
    return score_sentence(parse_tree(gold), parse_tree(test) if test else None, **kw)


def counts(r):
    return r.status, r.matched, r.gold_brackets, r.test_brackets


def test_identical_trees():
    r = score(CAT, CAT)
    assert counts(r) == (OK, 3, 3, 3) and r.exact
    assert (r.recall, r.precision, r.f1, r.tag_accuracy) == (100.0, 100.0, 100.0, 100.0)
    assert r.length == 4 and r.words == 3  # length counts punctuation, words do not


def test_punctuation_is_deleted_before_spans():
    # '.' attached inside VP: VP still spans word 2 only once '.' is gone -> all 3 match.
    r = score(CAT, "(S (NP (DT The) (NN cat)) (VP (VBD sat) (. .)))")
    assert counts(r) == (OK, 3, 3, 3)
    # A constituent holding only punctuation has an empty span and is deleted: 3 test brackets.
    gold = "(S (NP (DT The) (NN cat)) (, ,) (VP (VBD sat)))"
    r = score(gold, "(S (NP (DT The) (NN cat)) (PRN (, ,)) (VP (VBD sat)))")
    assert counts(r) == (OK, 3, 3, 3)


def test_top_and_unlabelled_root_are_ignored():
    # TOP is a DELETE_LABEL; '( (S ...))' (the .mrg root) is read as TOP: 3 brackets each side.
    for gold in (f"(TOP {CAT})", f"( {CAT})"):
        assert counts(score(gold, CAT)) == (OK, 3, 3, 3)
    # The sentence-level S is a real bracket: a test tree without it loses one of 3 gold brackets.
    r = score(CAT, "(TOP (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))")
    assert counts(r) == (OK, 2, 3, 2)


def test_unbracketed_test_line_has_no_brackets(tmp_path):
    # '(P this) (Q is) (R a) (T test)': 4 words and not a single bracket, as in EVALB's sample.
    gold, test = _files(
        tmp_path,
        ["(S (A (P this)) (B (Q is) (A (R a) (T test))))"],
        ["(P this) (Q is) (R a) (T test)"],
    )
    r = score_files(gold, test).report.sentences[0]
    assert counts(r) == (OK, 0, 4, 0) and r.correct_tags == 4


def test_advp_equals_prt_and_pos_tags_are_not_brackets():
    gold = "(S (NP (PRP He)) (VP (VBD ran) (ADVP (RB away))))"  # S NP VP ADVP
    test = "(S (NP (PRP He)) (VP (VBD ran) (PRT (RP away))))"  # S NP VP PRT (= ADVP)
    r = score(gold, test)
    assert counts(r) == (OK, 4, 4, 4)
    assert (r.words, r.correct_tags) == (3, 2)  # RB vs RP: tags differ, brackets do not care
    # Another label on the same span does not match.
    r = score(gold, test.replace("PRT", "NP"))
    assert counts(r) == (OK, 3, 4, 4)


def test_all_tags_wrong_but_brackets_right():
    r = score(CAT, "(S (NP (NN The) (VB cat)) (VP (NN sat)) (. .))")
    assert counts(r) == (OK, 3, 3, 3) and r.tag_accuracy == 0.0 and r.exact


def test_function_tags_are_cut():
    r = score(
        "(S-1 (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)))",
        "(S (NP (DT The) (NN cat)) (VP (VBD sat)))",
    )
    assert counts(r) == (OK, 3, 3, 3)


def test_duplicate_brackets_are_a_multiset():
    unary = "(S (NP (NP (NNS dogs))) (VP (VBP bark)))"  # S[0,2] NP[0,1] NP[0,1] VP[1,2]
    plain = "(S (NP (NNS dogs)) (VP (VBP bark)))"  # S[0,2] NP[0,1] VP[1,2]
    r = score(unary, plain)
    assert counts(r) == (OK, 3, 4, 3) and (r.recall, r.precision) == (75.0, 100.0) and not r.exact
    r = score(plain, unary)
    assert counts(r) == (OK, 3, 3, 4) and (r.recall, r.precision) == (100.0, 75.0)
    assert counts(score(unary, unary)) == (OK, 4, 4, 4)


def test_crossing_brackets():
    gold = "(S (NP (DT a) (NN b)) (VP (VBD c) (NP (NN d))))"  # S[0,4] NP[0,2] VP[2,4] NP[3,4]
    test = "(S (X (DT a) (NN b) (VBD c)) (NP (NN d)))"  # S[0,4] X[0,3] (crosses VP) NP[3,4]
    r = score(gold, test)
    assert counts(r) == (OK, 2, 4, 3) and r.crossing == 1
    assert r.recall == 50.0 and r.precision == pytest.approx(200 / 3)
    assert r.f1 == pytest.approx(2 * 50 * (200 / 3) / (50 + 200 / 3))


def test_length_and_word_mismatch_are_errors_and_empty_test_is_skipped():
    r = score(CAT, "(S (NP (DT The) (NN cat)) (VP (VBD sat) (NN down)) (. .))")
    assert r.status == ERROR and r.message == "Length unmatch (3|4)"
    r = score(CAT, "(S (NP (DT The) (NN dog)) (VP (VBD sat)) (. .))")
    assert r.status == ERROR and r.message == "Words unmatch (cat|dog)"
    # '.' tagged NN in the test is not deleted there: EVALB reports a length mismatch.
    r = score(CAT, "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (NN .))")
    assert r.status == ERROR and r.message == "Length unmatch (3|4)"
    r = score_sentence(parse_tree(CAT), None)
    assert r.status == SKIP
    r = score_sentence(parse_tree(CAT), None, test_error="unclosed bracket")
    assert r.status == ERROR


def test_align_punctuation_uses_gold_tags_to_delete_words():
    gold = "(S (NP (DT The) (NN cat)) (, ,) (VP (VBD sat) (NP (NN today))) (. .))"
    # The parser tagged ',' as NN and 'today' as '.': EVALB deletes different words -> error.
    test = "(S (NP (DT The) (NN cat) (NN ,)) (VP (VBD sat) (NP (. today))) (. .))"
    assert score(gold, test).status == ERROR
    aligned, changed = align_punctuation(parse_tree(gold), parse_tree(test))
    assert changed == 2
    assert (
        aligned.to_string()
        == "(S (NP (DT The) (NN cat) (, ,)) (VP (VBD sat) (NP (XX today))) (. .))"
    )
    r = score_sentence(parse_tree(gold), aligned)
    # Gold S NP VP NP; test S NP VP (NP over 'today' is kept: only the tag changed) -> 4 of 4;
    # 'today' tagged XX is a wrong tag: 3 of 4 tags right.
    assert counts(r) == (OK, 4, 4, 4) and (r.words, r.correct_tags) == (4, 3)
    # Different words: nothing to align, the tree comes back unchanged (EVALB still errors).
    other = "(S (NP (DT The) (NN dog)) (VP (VBD sat)) (NN .))"
    same, changed = align_punctuation(parse_tree(CAT), parse_tree(other))
    assert changed == 0 and same.to_string() == other
    # Gold traces do not count as words for the alignment.
    traced = "(S (NP (-NONE- *)) (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"
    aligned, changed = align_punctuation(
        parse_tree(traced), parse_tree("(S (NP (DT The) (NN cat)) (VP (VBD sat) (NN .)))")
    )
    assert changed == 1 and aligned.tags() == ["DT", "NN", "VBD", "."]


def test_corpus_totals_sum_counts_and_exclude_errors():
    gold = [CAT, "(S (NP (PRP He)) (VP (VBD ran) (ADVP (RB away))))", CAT, CAT]
    test = [CAT, "(S (NP (PRP He) (VP (VBD ran) (ADVP (RB away)))))", None, "(S (NN x))"]
    report = evaluate([parse_tree(g) for g in gold], [parse_tree(t) if t else None for t in test])
    c = report.all
    # sentence 1: 3/3/3; sentence 2: gold S NP VP ADVP, test S NP[0,3] VP ADVP -> 3 of 4 / 4;
    # sentence 3 skipped (empty test), sentence 4 an error (1 word vs 3).
    assert (c.sentences, c.errors, c.skipped, c.valid) == (4, 1, 1, 2)
    assert (c.matched, c.gold_brackets, c.test_brackets) == (6, 7, 7)
    assert c.recall == pytest.approx(600 / 7) and c.f1 == pytest.approx(600 / 7)
    assert c.complete == 1 and c.complete_match == 50.0
    assert (c.words, c.correct_tags) == (6, 6)
    text = format_report(report, per_sentence=True)
    assert "Bracketing FMeasure       =  85.71" in text and report.sentences[3].message == (
        "Length unmatch (3|1)"
    )


def test_cutoff_length_ignores_traces():
    words = " ".join(f"(NN w{i})" for i in range(41))
    long_tree = f"(S (NP {words}))"  # 41 words: only in the 'All' block
    with_trace = f"(S (NP {words.replace('(NN w0)', '(-NONE- *)')}))"  # 40 words + a trace
    report = evaluate(
        [parse_tree(long_tree), parse_tree(with_trace)],
        [parse_tree(long_tree), parse_tree(with_trace)],
    )
    assert [s.length for s in report.sentences] == [41, 40]
    assert report.all.sentences == 2 and report.short.sentences == 1
    with pytest.raises(DataError, match="1 gold trees but 2 test trees"):
        evaluate([parse_tree(CAT)], [parse_tree(CAT)] * 2)


def test_unlabelled_scoring():
    r = score(CAT, CAT.replace("(NP", "(XP"), params=EvalbParams(labeled=False))
    assert counts(r) == (OK, 3, 3, 3)


# ----------------------------------------------------------------------------- files and CLI


def _files(tmp_path, gold_lines, test_lines, test_name="test.txt"):
    """Writes gold.txt (unless ``gold_lines`` is None) and the test file; returns both paths."""
    gold, test = tmp_path / "gold.txt", tmp_path / test_name
    if gold_lines is not None:
        gold.write_text("".join(line + "\n" for line in gold_lines))
    test.write_text("".join(line + "\n" for line in test_lines))
    return str(gold), str(test)


def test_score_files_with_malformed_and_linearized_output(tmp_path):
    gold, test = _files(tmp_path, [CAT, CAT], [CAT, "(S (NP (DT The) (NN cat)"])
    scored = score_files(gold, test)
    assert (scored.report.all.errors, scored.test_stats.malformed) == (1, 1)
    assert scored.warnings()[0].startswith(f"{test}:2: ")
    assert "1 sentences are EVALB errors" in scored.warnings()[1]
    assert "sentence 2: test tree unreadable" in scored.warnings()[1]
    # Decoder output: the second line lacks '. /S' and '/VP' -> S NP VP(VBD) + (. .): 3 of 3 match.
    _, lin = _files(
        tmp_path, None, ["S NP DT NN /NP VP VBD /VP . /S\t-0.5", "S NP DT NN /NP VP VBD"], "lin.txt"
    )
    scored = score_files(gold, lin, linearized=True)
    assert (scored.report.all.matched, scored.report.all.gold_brackets) == (6, 6)
    assert scored.repairs.sentences_repaired == 1 and scored.report.all.correct_tags == 6
    # A decode that tags the final '.' as NN: an error unless punctuation is aligned.
    _, mistagged = _files(tmp_path, None, ["S NP DT NN /NP VP VBD /VP NN /S"] * 2, "mistag.txt")
    assert score_files(gold, mistagged, linearized=True).report.all.errors == 2
    scored = score_files(gold, mistagged, linearized=True, align_punct=True)
    assert (scored.report.all.errors, scored.report.all.matched, scored.punctuation_aligned) == (
        0,
        6,
        2,
    )
    assert any("2 test POS tags were aligned" in w for w in scored.warnings())
    with pytest.raises(DataError, match="has 2 trees but .* has 1 lines"):
        score_files(gold, _files(tmp_path, None, ["S /S"], "one.txt")[1], linearized=True)


def _evalb(*args):
    return run_tool("t2t-evalb", *args, timeout=120)


def _evalb_in_process(capsys, *args) -> tuple[int, str]:
    """Runs the tool's main through cli.run in this process (no second TensorFlow start-up)."""
    rc = evalb_tool.main(list(args))
    return rc, capsys.readouterr().err


def test_cli(tmp_path, capsys):
    gold = tmp_path / "gold.mrg"
    gold.write_text(
        f"( {CAT[:-1]}\n    )\n)\n( (S (NP (PRP He)) (VP (VBD ran) (ADVP (RB away)))))\n"
    )
    _, test = _files(tmp_path, None, [CAT, "(S (NP (PRP He)) (VP (VBD ran) (PRT (RP away))))"])
    proc = _evalb(f"--gold={gold}", f"--test={test}", "--json", "--per_sentence")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # 3 + 4 gold brackets, all matched (ADVP = PRT); tags 3/3 + 2/3.
    assert (out["all"]["matched"], out["all"]["gold_brackets"], out["all"]["f1"]) == (7, 7, 100.0)
    assert out["all"]["correct_tags"] == 5 and len(out["sentences"]) == 2
    assert out["len<=40"]["sentences"] == 2
    _, mistagged = _files(
        tmp_path,
        None,
        [CAT.replace("(. .)", "(NN .)"), "(S (NP (PRP He)) (VP (VBD ran) (ADVP (RB away))))"],
        "m.txt",
    )
    proc = _evalb(f"--gold={gold}", f"--test={mistagged}", "--json", "--align_punct")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["all"]["errors"], out["punctuation_aligned"], out["all"]["matched"]) == (0, 1, 7)
    _, short = _files(tmp_path, None, [CAT], "short.txt")
    rc, err = _evalb_in_process(capsys, f"--gold={gold}", f"--test={short}")
    assert rc == 1 and "has 2 trees but" in err and "Traceback" not in err
    rc, err = _evalb_in_process(capsys, f"--gold={tmp_path / 'none.txt'}", f"--test={short}")
    assert rc == 1 and "--gold" in err and "does not exist" in err
    rc, err = _evalb_in_process(capsys, f"--gold={gold}")
    assert rc == 1 and "--test" in err


# ----------------------------------------------------------------------------- EVALB exactness


def test_blank_last_test_line_is_a_skipped_sentence(tmp_path):
    # A parse that failed on the last sentence: "CAT\n\n". Only the file's final newline goes.
    gold, test = _files(tmp_path, [CAT, CAT], [CAT, ""])
    report = score_files(gold, test).report
    assert (report.all.sentences, report.all.skipped, report.all.errors, report.all.valid) == (
        2,
        1,
        0,
        1,
    )


def test_blank_gold_and_test_lines_are_skipped_not_errors(tmp_path):
    gold, test = _files(tmp_path, [CAT, "", CAT], [CAT, "", CAT])
    report = score_files(gold, test).report
    assert (report.all.skipped, report.all.errors, report.all.matched) == (1, 0, 6)
    assert report.sentences[1].status == SKIP


def test_empty_bracket_is_deleted_not_an_error(tmp_path):
    # (NP) has no words: a zero-span bracket, deleted; the other 3 brackets all match.
    gold, test = _files(tmp_path, [CAT], ["(S (NP (DT The) (NN cat)) (NP) (VP (VBD sat)) (. .))"])
    report = score_files(gold, test).report
    assert (report.all.errors, report.all.matched, report.all.test_brackets) == (0, 3, 3)


def test_text_report_has_evalb_totals_row_and_summary_line():
    report = evaluate(
        [parse_tree(CAT)] * 2,
        [parse_tree(CAT), parse_tree(CAT.replace("(VP (VBD sat))", "(VBD sat)"))],
    )
    lines = format_report(report, per_sentence=True).split("\n")
    # Totals as evalb.c's print_total: recall 6/6, precision 6/5... matched 5, gold 6, test 5.
    totals = lines[lines.index("=" * 76, 3) + 1]
    assert totals == "                 83.33 100.00      5     6     5      0      6     6   100.00"
    assert lines[lines.index(totals) + 1 :][:3] == ["=== Summary ===", "", "-- All --"]
    assert format_report(report).startswith("=== Summary ===\n\n-- All --\n")


def test_evalb_root_scores_the_unlabelled_root_as_an_empty_label(tmp_path):
    gold, test = _files(tmp_path, [f"( {CAT})"], [CAT])
    assert score_files(gold, test).report.all.gold_brackets == 3
    # EVALB's way: the unlabelled root is a bracket labelled "": 4 gold brackets, 3 matched.
    from t2t_repro.parsing.scoring import evalb_params

    report = score_files(gold, test, params=evalb_params(evalb_root=True)).report
    assert (report.all.gold_brackets, report.all.test_brackets, report.all.matched) == (4, 3, 3)


def test_rows_have_evalb_columns_only_and_reasons_go_to_stderr(tmp_path, capsys):
    # evalb.c prints a row's 12 columns and the reason for an error on stderr; a script that
    # splits the rows must not find more fields in ours.
    gold, test = _files(tmp_path, [CAT, CAT], [CAT, CAT.replace("cat", "dog"), ""][:2])
    rc = evalb_tool.main([f"--gold={gold}", f"--test={test}", "--per_sentence"])
    out, err = capsys.readouterr()
    rows = out.split("\n")[3:5]
    # Length 4 (punctuation counts, only -NONE- does not); an error row is all zeros.
    assert rows[1] == "   2    4    1    0.00   0.00     0      0    0      0      0     0     0.00"
    assert rc == 0 and [len(r.split()) for r in rows] == [12, 12]
    assert "sentence 2: Words unmatch (cat|dog)" in err


def test_fmeasure_is_nan_as_evalb_prints_it_when_nothing_matches():
    # print_total computes 2PR/(P+R) unguarded: 0/0 is printed "-nan" (glibc, x86-64).
    skipped = evaluate([parse_tree(CAT)], [None])  # no valid sentence at all
    assert format_report(skipped).count("Bracketing FMeasure       =   -nan") == 2
    # Valid but no bracket matched: gold S[0,3] NP[0,2] VP[2,3], test X[0,3] only.
    flat = evaluate([parse_tree(CAT)], [parse_tree("(X (DT The) (NN cat) (VBD sat) (. .))")])
    assert (flat.all.matched, flat.all.test_brackets) == (0, 1)
    assert "Bracketing FMeasure       =   -nan" in format_report(flat)
    assert flat.all.as_dict()["f1"] == 0.0  # --json keeps a number


def test_brackets_are_read_as_evalb_reads_them(tmp_path):
    # evalb.c, read_line: after "(" the label runs to a space or bracket; a space, an optional
    # word and ")" make a word. "(NP)" and "()" are brackets without words (deleted); "(NP )"
    # and "( )" are the word "" (one word too many); "( sat)" is 'sat' with an empty tag.
    tests = [
        "(S (NP (DT The) (NN cat)) (NP) (VP (VBD sat)) (. .))",
        "(S (NP (DT The) (NN cat)) () (VP (VBD sat)) (. .))",
        "(S (NP (DT The) (NN cat)) (NP ) (VP (VBD sat)) (. .))",
        "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (\t) (. .))",
        "(S (NP (DT The) (NN cat)) (VP ( sat)) (. .))",
        "(S(NP(DT The)(NN cat))(VP(VBD\tsat))(. .))",
    ]
    gold, test = _files(tmp_path, [CAT] * len(tests), tests)
    r = score_files(gold, test).report.sentences
    assert [counts(x) for x in r[:2]] == [(OK, 3, 3, 3)] * 2
    assert [(x.status, x.message) for x in r[2:4]] == [(ERROR, "Length unmatch (3|4)")] * 2
    assert counts(r[4]) == (OK, 3, 3, 3) and (r[4].words, r[4].correct_tags) == (3, 2)
    assert counts(r[5]) == (OK, 3, 3, 3) and r[5].correct_tags == 3
