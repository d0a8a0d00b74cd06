"""A problem's dev metric: what the trainer decodes at every evaluation and how it is scored.

T2T's ``Problem`` owns its task's behaviour (``tensor2tensor/data_generators/problem.py``,
``eval_metrics``); here a problem hands the trainer a ``DevMetric`` (``Problem.dev_metric``):
the dev examples to decode (source id rows or source lines), the decode hparams for them, and
a scorer of the decoded texts. The trainer decodes generically with the live model
(``training/loop/dev_decodes.py``) and never learns which task it is: it logs
``log_text(scores)`` and writes ``scores`` to TensorBoard.
"""

from __future__ import annotations

from collections.abc import Sequence

from t2t_repro.metrics.bleu import sacrebleu_score


class DevMetric:
    """Dev examples plus a scorer. Exactly one of ``input_ids`` (id rows, EOS included) and
    ``lines`` (source text) is set; ``decode_overrides`` go on top of the problem's
    ``decode_defaults``."""

    name = "dev"
    names: tuple[str, ...] = ()  # the keys of ``score``'s result (--eval_early_stopping_metric)
    decode_overrides = ""

    def __init__(
        self,
        input_ids: Sequence[Sequence[int]] | None = None,
        lines: Sequence[str] | None = None,
    ) -> None:
        if (input_ids is None) == (lines is None):
            raise ValueError("a DevMetric needs exactly one of input_ids and lines")
        self.input_ids = None if input_ids is None else [list(row) for row in input_ids]
        self.lines = None if lines is None else list(lines)

    def __len__(self) -> int:
        return len(self.input_ids if self.input_ids is not None else self.lines)

    def score(self, hypotheses: list[str]) -> dict[str, float]:
        """{TensorBoard name: value} of the best decodes, one per example, in order."""
        raise NotImplementedError

    def log_text(self, scores: dict[str, float]) -> str:
        """What the eval log line adds, e.g. ``", BLEU 21.30 (sacreBLEU, 64 dev sentences)"``."""
        raise NotImplementedError


class DevBleu(DevMetric):
    """sacreBLEU (13a, cased) of beam-search decodes (the decode defaults, ``extra_length``
    50); the references are the dev targets decoded back to text, which the invertible
    subword encoder makes exact."""

    name = "bleu"
    names = ("bleu",)
    decode_overrides = "extra_length=50,batch_size=32"

    def __init__(self, input_ids: Sequence[Sequence[int]], references: Sequence[str]) -> None:
        super().__init__(input_ids=input_ids)
        self.references = list(references)

    def score(self, hypotheses: list[str]) -> dict[str, float]:
        return {"bleu": sacrebleu_score(self.references, hypotheses)}

    def log_text(self, scores: dict[str, float]) -> str:
        return f", BLEU {scores['bleu']:.2f} (sacreBLEU, {len(self)} dev sentences)"
