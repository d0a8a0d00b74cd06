"""Scoring parser output files with EVALB rules, and EVALB's text report (what ``t2t-evalb``
prints).

The gold file holds trees (one per line or the .mrg layout). The test file holds either trees,
aligned with the gold ones, or, with ``linearized=True``, the decoder's raw output: one T2T
target sequence per line (text after a tab, such as a beam score, is ignored), turned into a
tree over the gold sentence's words by ``linearize.delinearize``. That always succeeds, even
for an empty output, so every sentence is scored; the repairs it needed are counted. An
unreadable tree is scored as an EVALB error sentence and an empty test line (tree files only)
as a skipped one, so one bad line never shifts the others.

``align_punct=True`` first applies Collins' punctuation preprocessing (``evalb.align_punctuation``)
to every test tree, so that EVALB deletes the same words from both trees. Without it a parse that
mistags one comma is an error sentence and drops out of every score.
"""

from __future__ import annotations

import dataclasses

from t2t_repro.data.text_files import DataError
from t2t_repro.parsing.evalb import (
    BLANK,
    COLLINS,
    ERROR,
    CorpusResult,
    EvalbParams,
    EvalbReport,
    SentenceResult,
    align_punctuation,
    evaluate,
)
from t2t_repro.parsing.linearize import Repairs, delinearize_with_repairs
from t2t_repro.parsing.tree_files import TreeReadStats, read_text, read_tree_items
from t2t_repro.parsing.trees import normalize


@dataclasses.dataclass
class ScoredFiles:
    """The EVALB report plus what reading the files found (malformed trees, repairs)."""

    report: EvalbReport
    gold_stats: TreeReadStats
    test_stats: TreeReadStats
    repairs: Repairs | None = None
    punctuation_aligned: int | None = None

    def warnings(self) -> list[str]:
        """Lines worth showing the user: malformed trees (``file:line``) and delinearisation
        repairs."""
        out = list(self.gold_stats.problems) + list(self.test_stats.problems)
        for stats in (self.gold_stats, self.test_stats):
            hidden = stats.malformed - len(stats.problems)
            if hidden > 0:
                out.append(f"... and {hidden} more malformed trees")
        errors = [r for r in self.report.sentences if r.status == ERROR]
        if errors:
            shown = "; ".join(f"sentence {r.id}: {r.message}" for r in errors[:5])
            out.append(
                f"{len(errors)} sentences are EVALB errors, left out of every score as EVALB "
                f"does ({shown}{'; ...' if len(errors) > 5 else ''})"
            )
        if self.repairs is not None and self.repairs.sentences_repaired:
            counts = ", ".join(
                f"{k} {v}"
                for k, v in self.repairs.as_dict().items()
                if v and k != "sentences_repaired"
            )
            out.append(
                f"{self.repairs.sentences_repaired} parser outputs were ill-formed and "
                f"repaired ({counts})"
            )
        if self.punctuation_aligned:
            out.append(
                f"{self.punctuation_aligned} test POS tags were aligned with the gold punctuation "
                "tags (--align_punct, Collins' preprocessing)"
            )
        return out


def _linearized_lines(path: str, stats: TreeReadStats) -> list[str]:
    text = read_text(path, stats)
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    if lines == [""]:
        return []
    return [line.split("\t", 1)[0].strip() for line in lines]


def score_files(
    gold_path: str,
    test_path: str,
    *,
    linearized: bool = False,
    layout: str = "auto",
    params: EvalbParams = COLLINS,
    align_punct: bool = False,
) -> ScoredFiles:
    """EVALB-score ``test_path`` against ``gold_path`` (module docstring); DataError on a count
    mismatch."""
    gold_stats, test_stats = TreeReadStats(), TreeReadStats()
    gold_items = read_tree_items(gold_path, gold_stats, layout, evalb_syntax=True)
    gold = [item.tree for item in gold_items]
    gold_errors = [item.error or (BLANK if item.blank else "") for item in gold_items]
    repairs = None
    if linearized:
        outputs = _linearized_lines(test_path, test_stats)
        _check_counts(len(gold), len(outputs), gold_path, test_path, "lines")
        test, test_errors, repairs = delinearize_outputs(gold, outputs)
    else:
        test_items = read_tree_items(test_path, test_stats, layout, evalb_syntax=True)
        _check_counts(len(gold), len(test_items), gold_path, test_path, "trees")
        test = [item.tree for item in test_items]
        test_errors = [item.error or "" for item in test_items]
    report, aligned = _evaluate(gold, test, params, gold_errors, test_errors, align_punct)
    return ScoredFiles(report, gold_stats, test_stats, repairs, aligned)


def delinearize_outputs(gold: list, outputs: list[str]) -> tuple[list, list[str], Repairs]:
    """Trees of decoder outputs over the gold sentences' words, their error messages, repairs."""
    repairs, test, test_errors = Repairs(), [], []
    for tree, output in zip(gold, outputs, strict=True):
        words = normalize(tree) if tree is not None else None
        if words is None:
            test.append(None)
            test_errors.append("no gold words to place the parse on")
            continue
        parsed, fixed = delinearize_with_repairs(words.words(), output)
        repairs.add(fixed)
        test.append(parsed)
        test_errors.append("")
    return test, test_errors, repairs


def score_outputs(
    gold: list, outputs: list[str], params: EvalbParams = COLLINS, align_punct: bool = False
) -> tuple[EvalbReport, Repairs]:
    """EVALB report of decoder outputs (linearised trees) against gold trees, in memory."""
    test, test_errors, repairs = delinearize_outputs(gold, outputs)
    return _evaluate(gold, test, params, [""] * len(gold), test_errors, align_punct)[0], repairs


def _evaluate(gold, test, params, gold_errors, test_errors, align_punct):
    aligned = None
    if align_punct:
        aligned = 0
        for i, (g, t) in enumerate(zip(gold, test, strict=True)):
            if g is not None and t is not None:
                test[i], changed = align_punctuation(g, t, params)
                aligned += changed
    return evaluate(gold, test, params, gold_errors, test_errors), aligned


def evalb_params(evalb_root: bool = False) -> EvalbParams:
    """COLLINS.prm; ``evalb_root``: the unlabelled root scored as EVALB does (a "" bracket)."""
    return dataclasses.replace(COLLINS, unlabelled_root_is_top=not evalb_root)


def _check_counts(n_gold: int, n_test: int, gold_path: str, test_path: str, unit: str) -> None:
    if n_gold != n_test:
        raise DataError(
            f"{gold_path} has {n_gold} trees but {test_path} has {n_test} {unit}; EVALB "
            "needs exactly one test tree per gold tree, in the same order."
        )


# ----------------------------------------------------------------------------- EVALB's text


def format_sentence(r: SentenceResult) -> str:
    """One row of EVALB's per-sentence table: its 12 columns only, so that scripts that split
    EVALB's rows split ours (why a sentence is an error goes to stderr, as in EVALB)."""
    return (
        f"{r.id:4d}  {r.length:3d}    {r.status}  {r.recall:6.2f} {r.precision:6.2f}"
        f"   {r.matched:3d}    {r.gold_brackets:3d}  {r.test_brackets:3d}    {r.crossing:3d}"
        f"   {r.words:4d}  {r.correct_tags:4d}   {r.tag_accuracy:6.2f}"
    )


def format_fmeasure(c: CorpusResult) -> str:
    """EVALB's F-measure text: ``-nan`` when precision and recall are both 0 (``evalb.c``,
    ``print_total``, computes 2PR/(P+R) unguarded; glibc on x86-64 prints 0/0 as ``-nan``)."""
    return f"{c.f1:6.2f}" if c.precision + c.recall else f"{'-nan':>6}"


def format_summary(c: CorpusResult) -> str:
    """EVALB's summary block for one set of sentences."""
    d = c.as_dict()
    rows = [
        ("Number of sentence", c.sentences, "d"),
        ("Number of Error sentence", c.errors, "d"),
        ("Number of Skip  sentence", c.skipped, "d"),
        ("Number of Valid sentence", c.valid, "d"),
        ("Bracketing Recall", c.recall, ".2f"),
        ("Bracketing Precision", c.precision, ".2f"),
        ("Bracketing FMeasure", format_fmeasure(c), ""),
        ("Complete match", c.complete_match, ".2f"),
        ("Average crossing", c.average_crossing, ".2f"),
        ("No crossing", d["no_crossing_pct"], ".2f"),
        ("2 or less crossing", d["two_or_less_crossing_pct"], ".2f"),
        ("Tagging accuracy", c.tag_accuracy, ".2f"),
    ]
    return "\n".join(
        f"{name:<26}= {value:6{fmt}}" if fmt else f"{name:<26}= {value}"
        for name, value, fmt in rows
    )


def format_report(report: EvalbReport, per_sentence: bool = False) -> str:
    """The per-sentence table (optional) and the ``All`` and ``len<=40`` summaries, as EVALB
    prints."""
    parts = []
    if per_sentence:
        parts += [
            "  Sent.                        Matched  Bracket   Cross        Correct Tag",
            " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy",
            "=" * 76,
            *(format_sentence(s) for s in report.sentences),
            "=" * 76,
            format_totals(report.all),
        ]
    parts += [
        "=== Summary ===",
        "",
        "-- All --",
        format_summary(report.all),
        "",
        f"-- len<={report.cutoff_len} --",
        format_summary(report.short),
    ]
    return "\n".join(parts)


def format_totals(c: CorpusResult) -> str:
    """EVALB's totals row under the per-sentence table (``evalb.c``, ``print_total``); the
    bracket columns only when both trees had brackets, as there."""
    brackets = (
        f"                {c.recall:6.2f} {c.precision:6.2f} {c.matched:6d} {c.gold_brackets:5d}"
        f" {c.test_brackets:5d}  {c.crossing:5d}"
        if c.gold_brackets and c.test_brackets
        else ""
    )
    return brackets + f"  {c.words:5d} {c.correct_tags:5d}   {c.tag_accuracy:6.2f}"
