"""The exported ``nbest`` signature's contract, shared by the exporter, its check and clients.

``nbest(sources [B]) -> translations string [B, k], scores float32 [B, k]``: every beam, best
first, as ``t2t-decoder --decode_hparams=return_beams=True`` gives them. A column that is no
hypothesis (T2T's beam search keeps -INF placeholders when fewer than k beams finished)
has translation "" and a score below ``PLACEHOLDER_SCORE``.
"""

from __future__ import annotations

from collections.abc import Sequence

from t2t_repro.decoding.line_decoder import FILLER_SCORE, Hypothesis, hypotheses_found

NBEST_SIGNATURE = "nbest"
# Below this a column is no hypothesis: the decoder's rule (line_decoder.FILLER_SCORE).
PLACEHOLDER_SCORE = FILLER_SCORE


def as_text(value) -> str:
    """A string tensor element (bytes) or a JSON string as text."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def rows_to_hypotheses(texts: Sequence, scores: Sequence) -> list[list[Hypothesis]]:
    """[B, k] outputs -> the hypotheses per line, placeholder columns left out
    (``line_decoder.hypotheses_found``: t2t-decoder writes them, as T2T's does)."""
    return [
        hypotheses_found(
            [Hypothesis(as_text(t), float(s)) for t, s in zip(row_texts, row_scores, strict=True)]
        )
        for row_texts, row_scores in zip(texts, scores, strict=True)
    ]
