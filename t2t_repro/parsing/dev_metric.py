"""Dev F1 of real decoded parses: the parsing problems' ``DevMetric`` (the twin of dev BLEU).

The dev sentences and gold trees are the files datagen writes for parsing problems
(``<problem>.dev.words`` / ``.trees``). The trainer decodes the first sentences with the live
model and the problem's decode defaults (so tree-constrained), greedily: beam 21 would take a
good part of a CPU hour at every evaluation. The decodes are scored with EVALB's rules
(COLLINS.prm), strictly, as ``t2t-evalb --linearized`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from t2t_repro.metrics.dev_metric import DevMetric
from t2t_repro.parsing.scoring import score_outputs


class DevParseF1(DevMetric):
    """Strict EVALB figures of the decodes, named ``parse_<figure>``."""

    name = "parse"
    FIGURES = (
        "f1",
        "precision",
        "recall",
        "complete_match",
        "tagging_accuracy",
        "valid_sentences",
        "error_sentences",
        "repaired_outputs",
    )
    names = tuple(f"parse_{figure}" for figure in FIGURES)
    decode_overrides = "beam_size=1,batch_size=64"

    def __init__(self, sentences: Sequence[str], gold: Sequence) -> None:
        super().__init__(lines=sentences)
        self.gold = list(gold)[: len(self)]

    def score(self, hypotheses: list[str]) -> dict[str, float]:
        """f1, precision, recall, complete match, tagging accuracy, and how many sentences
        were EVALB errors or needed repairs."""
        report, repairs = score_outputs(self.gold, hypotheses)
        corpus = report.all
        figures = {
            "f1": corpus.f1,
            "precision": corpus.precision,
            "recall": corpus.recall,
            "complete_match": corpus.complete_match,
            "tagging_accuracy": corpus.tag_accuracy,
            "valid_sentences": corpus.valid,
            "error_sentences": corpus.errors,
            "repaired_outputs": repairs.sentences_repaired,
        }
        return {f"parse_{k}": v for k, v in figures.items()}

    def log_text(self, scores: dict[str, float]) -> str:
        return (
            f", F1 {scores['parse_f1']:.2f} (EVALB, {len(self)} dev sentences, "
            f"{scores['parse_error_sentences']} errors)"
        )
