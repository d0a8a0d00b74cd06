"""Labelled bracket scoring as EVALB (Sekine & Collins 1997) does it with ``COLLINS.prm``.

Per sentence pair (gold, test), following evalb.c:

* Terminals are the preterminals' words. A terminal whose POS tag is a ``DELETE_LABEL`` (exact
  match: ``TOP -NONE- , : `` '' .``) is deleted: it is not a word for the spans, the length check
  or tagging accuracy. The reported sentence length counts every gold terminal except
  ``DELETE_LABEL_FOR_LENGTH`` ones (``-NONE-``); it selects the ``len<=40`` (``CUTOFF_LEN``) block.
* Brackets are the constituents above preterminals (POS tags are never brackets), the root
  included, with spans over the remaining terminals. A bracket with an empty span is deleted;
  labels are cut at their first ``-`` or ``=`` (``NP-SBJ-1`` -> ``NP``); a bracket whose label is
  then a ``DELETE_LABEL`` (``TOP``) is deleted. An unlabelled root (``( (S ...) )``, the .mrg
  layout) is read as ``TOP``: real EVALB counts it as a bracket labelled ``""``, which is
  why pipelines convert .mrg trees before scoring; here both forms score alike unless
  ``unlabelled_root_is_top=False`` (EVALB's way).
* Status: a test tree with no terminals left is *skipped* (2); a different number of terminals
  ("Length unmatch"), a different word ("Words unmatch") or an unreadable tree is an *error*
  (1); a blank gold line with a blank test line is skipped too. Trees are read as EVALB reads
  them (``trees.tokenize(..., evalb_syntax=True)``): ``(NP)`` is a bracket without words, deleted
  like any zero-span bracket, while ``(NP )`` is the word "" tagged NP. Skipped and
  error sentences are counted and left out of every other total. (EVALB tolerates 11 errors,
  ``MAX_ERROR`` = 10 plus one, and exits with status 1 at the 12th; here they are only counted.)
* Matching is a multiset: each gold bracket takes the first unmatched test bracket with the same
  span and an equal label, where ``EQ_LABEL ADVP PRT`` makes those two equal; a duplicated
  bracket (a unary chain ``NP -> NP``) must be matched twice.
* Recall = matched / gold brackets, precision = matched / test brackets, F1 = 2PR/(P+R) (0
  here when P+R is 0; EVALB's text, and ours, prints ``-nan``), per
  sentence and corpus-wide (summed counts); complete match = every bracket matched both ways;
  crossing = test brackets that cross some gold bracket; tagging accuracy over the terminals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from t2t_repro.data.text_files import DataError
from t2t_repro.parsing.trees import Tree

OK, ERROR, SKIP = 0, 1, 2
BLANK = "empty line"  # the reason given for a blank gold line


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """The parameter-file settings that matter; the defaults are ``COLLINS.prm``."""

    delete_labels: frozenset = frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."})
    delete_labels_for_length: frozenset = frozenset({"-NONE-"})
    equivalent_labels: tuple = (("ADVP", "PRT"),)
    labeled: bool = True
    cutoff_len: int = 40
    # The unlabelled root of ``( (S ...) )`` is read as TOP (not a bracket); False scores it
    # as EVALB does, as a bracket labelled "" (t2t-evalb --evalb_root).
    unlabelled_root_is_top: bool = True

    def same_label(self, a: str, b: str) -> bool:
        return a == b or (a, b) in self.equivalent_labels or (b, a) in self.equivalent_labels


COLLINS = EvalbParams()


def evalb_label(label: str) -> str:
    """EVALB's ``modify_label``: cut at the first ``-`` or ``=`` (even at position 0)."""
    for i, ch in enumerate(label):
        if ch in "-=":
            return label[:i]
    return label


@dataclasses.dataclass
class Extracted:
    """What EVALB reads from one tree: kept words and tags, scored brackets, length."""

    words: list
    tags: list
    brackets: list  # (start, end, label), deleted ones already removed
    length: int


def extract(tree: Tree, params: EvalbParams = COLLINS) -> Extracted:
    """Terminals, tags, scored brackets and length of one tree, as EVALB sees them."""
    out = Extracted([], [], [], 0)

    def walk(node: Tree, is_root: bool) -> None:
        if node.is_preterminal:
            if node.label not in params.delete_labels_for_length:
                out.length += 1
            if node.label not in params.delete_labels:
                out.words.append(node.word)
                out.tags.append(node.label)
            return
        start = len(out.words)
        for child in node.children:
            walk(child, False)
        unlabelled_root = is_root and not node.label and params.unlabelled_root_is_top
        label = "TOP" if unlabelled_root else evalb_label(node.label)
        if len(out.words) > start and not any(
            params.same_label(label, d) for d in params.delete_labels
        ):
            out.brackets.append((start, len(out.words), label))

    walk(tree, True)
    return out


def _pct(num: float, den: float) -> float:
    return 100.0 * num / den if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


class _Scores:
    """Recall, precision, F1 and tagging accuracy (percentages) from the counts of a subclass."""

    matched: int
    gold_brackets: int
    test_brackets: int
    words: int
    correct_tags: int

    @property
    def recall(self) -> float:
        return _pct(self.matched, self.gold_brackets)

    @property
    def precision(self) -> float:
        return _pct(self.matched, self.test_brackets)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    @property
    def tag_accuracy(self) -> float:
        return _pct(self.correct_tags, self.words)


@dataclasses.dataclass
class SentenceResult(_Scores):
    """One line of EVALB's table (``status``: 0 ok, 1 error, 2 skip; ``message`` says why)."""

    id: int
    length: int = 0
    status: int = OK
    matched: int = 0
    gold_brackets: int = 0
    test_brackets: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    message: str = ""

    @property
    def exact(self) -> bool:
        return self.status == OK and self.matched == self.gold_brackets == self.test_brackets

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(
            recall=self.recall,
            precision=self.precision,
            f1=self.f1,
            tag_accuracy=self.tag_accuracy,
            exact=self.exact,
        )
        return d


def score_sentence(
    gold: Tree | None,
    test: Tree | None,
    params: EvalbParams = COLLINS,
    sent_id: int = 1,
    gold_error: str = "",
    test_error: str = "",
) -> SentenceResult:
    """Score one pair. ``None`` stands for an unreadable tree (error) or, with no ``test_error``, an
    empty test line (skip)."""
    result = SentenceResult(sent_id)
    if gold is None:
        if gold_error == BLANK and test is None and not test_error:
            result.status, result.message = SKIP, "empty gold and test lines"
            return result
        result.status, result.message = ERROR, f"gold tree unreadable: {gold_error or 'empty'}"
        return result
    g = extract(gold, params)
    result.length = g.length
    if test is None and test_error:
        result.status, result.message = ERROR, f"test tree unreadable: {test_error}"
        return result
    t = extract(test, params) if test is not None else None
    if t is None or not t.words:
        result.status, result.message = SKIP, "empty test tree"
        return result
    if len(g.words) != len(t.words):
        result.status, result.message = ERROR, f"Length unmatch ({len(g.words)}|{len(t.words)})"
        return result
    for gw, tw in zip(g.words, t.words, strict=True):
        if gw != tw:
            result.status, result.message = ERROR, f"Words unmatch ({gw}|{tw})"
            return result
    unmatched = list(t.brackets)
    for start, end, label in g.brackets:
        for j, (ts, te, tl) in enumerate(unmatched):
            if ts == start and te == end and (not params.labeled or params.same_label(label, tl)):
                del unmatched[j]
                result.matched += 1
                break
    result.gold_brackets, result.test_brackets = len(g.brackets), len(t.brackets)
    result.crossing = sum(
        any(gs < ts < ge < te or ts < gs < te < ge for gs, ge, _ in g.brackets)
        for ts, te, _ in t.brackets
    )
    result.words = len(g.words)
    result.correct_tags = sum(params.same_label(a, b) for a, b in zip(g.tags, t.tags, strict=False))
    return result


@dataclasses.dataclass
class CorpusResult(_Scores):
    """EVALB's summary block over a set of sentences (counts are summed, then divided)."""

    sentences: int = 0
    errors: int = 0
    skipped: int = 0
    matched: int = 0
    gold_brackets: int = 0
    test_brackets: int = 0
    crossing: int = 0
    complete: int = 0
    no_crossing: int = 0
    two_or_less_crossing: int = 0
    words: int = 0
    correct_tags: int = 0

    @classmethod
    def of(cls, results: Sequence[SentenceResult]) -> CorpusResult:
        c = cls()
        for r in results:
            c.sentences += 1
            if r.status == ERROR:
                c.errors += 1
                continue
            if r.status == SKIP:
                c.skipped += 1
                continue
            c.matched += r.matched
            c.gold_brackets += r.gold_brackets
            c.test_brackets += r.test_brackets
            c.crossing += r.crossing
            c.complete += r.exact
            c.no_crossing += r.crossing == 0
            c.two_or_less_crossing += r.crossing <= 2
            c.words += r.words
            c.correct_tags += r.correct_tags
        return c

    @property
    def valid(self) -> int:
        return self.sentences - self.errors - self.skipped

    @property
    def complete_match(self) -> float:
        return _pct(self.complete, self.valid)

    @property
    def average_crossing(self) -> float:
        return self.crossing / self.valid if self.valid else 0.0

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(
            valid=self.valid,
            recall=self.recall,
            precision=self.precision,
            f1=self.f1,
            complete_match=self.complete_match,
            average_crossing=self.average_crossing,
            no_crossing_pct=_pct(self.no_crossing, self.valid),
            two_or_less_crossing_pct=_pct(self.two_or_less_crossing, self.valid),
            tagging_accuracy=self.tag_accuracy,
        )
        return d


@dataclasses.dataclass
class EvalbReport:
    """Per-sentence results plus the ``All`` and ``len<=cutoff`` summaries."""

    sentences: list
    all: CorpusResult
    short: CorpusResult
    cutoff_len: int = 40

    def as_dict(self, per_sentence: bool = False) -> dict:
        d = {"all": self.all.as_dict(), f"len<={self.cutoff_len}": self.short.as_dict()}
        if per_sentence:
            d["sentences"] = [s.as_dict() for s in self.sentences]
        return d


PLACEHOLDER_TAG = "XX"


def align_punctuation(gold: Tree, test: Tree, params: EvalbParams = COLLINS) -> tuple[Tree, int]:
    """Collins' punctuation preprocessing: decide which words EVALB deletes from the gold tags
    alone.

    EVALB deletes a word by its own tree's POS tag, so a parse that tags a comma ``NN`` (or a
    word ``,``) fails the whole sentence as "Length unmatch" although the words are the same.
    Collins distributed a script, run on parser output before EVALB, that bases the decision on
    the gold tags; this is it. When gold and test have the same words, a test word whose gold
    tag is a deleted one (``, : `` '' .``) takes that tag, and a test word wrongly tagged as one
    becomes ``XX`` (scored as a wrong tag). Brackets are untouched. Returns a copy and the number
    of tags changed; trees with different words are returned as they are.
    """
    aligned = test.copy()
    gold_leaves = [p for p in gold.preterminals() if p.label not in params.delete_labels_for_length]
    test_leaves = [
        p for p in aligned.preterminals() if p.label not in params.delete_labels_for_length
    ]
    if [p.word for p in gold_leaves] != [p.word for p in test_leaves]:
        return aligned, 0
    punctuation = params.delete_labels - {"TOP"} - params.delete_labels_for_length
    changed = 0
    for g, t in zip(gold_leaves, test_leaves, strict=True):
        if g.label in punctuation and t.label != g.label:
            t.label, changed = g.label, changed + 1
        elif t.label in punctuation and g.label not in punctuation:
            t.label, changed = PLACEHOLDER_TAG, changed + 1
    return aligned, changed


def evaluate(
    gold: Sequence[Tree | None],
    test: Sequence[Tree | None],
    params: EvalbParams = COLLINS,
    gold_errors: Sequence[str] | None = None,
    test_errors: Sequence[str] | None = None,
) -> EvalbReport:
    """Score aligned gold and test trees (``None``: unreadable, or an empty test line; see
    score_sentence)."""
    if len(gold) != len(test):
        raise DataError(
            f"{len(gold)} gold trees but {len(test)} test trees; EVALB needs one test tree "
            "per gold tree, in the same order."
        )
    gold_errors = gold_errors or [""] * len(gold)
    test_errors = test_errors or [""] * len(test)
    results = [
        score_sentence(g, t, params, i + 1, ge, te)
        for i, (g, t, ge, te) in enumerate(zip(gold, test, gold_errors, test_errors, strict=True))
    ]
    short = [r for r in results if r.length <= params.cutoff_len]
    return EvalbReport(results, CorpusResult.of(results), CorpusResult.of(short), params.cutoff_len)
