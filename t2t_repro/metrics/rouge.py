"""T2T's approximate ROUGE-2 F and ROUGE-L F of id sequences (``tensor2tensor/utils/rouge.py``:
``rouge_n``, ``rouge_l_sentence_level``), the eval metrics ``rouge_2_fscore`` and
``rouge_L_fscore``.

T2T scores the argmax ids of the teacher-forced logits against the 0-padded target rows of an
eval batch (``rouge_2_fscore``, ``rouge_l_fscore``: padding included, word pieces not joined)
and reports the mean over sentences. Its definitions are not the ``rouge-score`` library's,
so they are T2T's here, not the library's:

- ROUGE-2 counts *distinct* bigrams (sets); the library clips repeated ones (multisets).
  They agree when no bigram repeats in either sequence.
- ROUGE-L F is ``(1 + b^2) R P / (R + b^2 P)`` with ``b = P / R`` (plus T2T's 1e-12 guards),
  not the harmonic mean ``2 R P / (R + P)``. They agree when the sequences have equal
  lengths, which the eval's rows always have.

The per-sentence arithmetic is T2T's, in the same order on Python floats, and the batch mean
is T2T's ``np.mean(..., dtype=np.float32)``; only the LCS table is computed differently
(row by row over the whole batch with numpy, the same integers).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _bigram_f(candidate: Sequence[int], reference: Sequence[int], n: int = 2) -> float:
    """T2T's ``rouge_n`` of one pair: F1 of the distinct n-grams (1e-8 guard), 0 without any."""
    eval_ngrams = {tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1)}
    ref_ngrams = {tuple(reference[i : i + n]) for i in range(len(reference) - n + 1)}
    overlap = len(eval_ngrams & ref_ngrams)
    precision = overlap / len(eval_ngrams) if eval_ngrams else 0.0
    recall = overlap / len(ref_ngrams) if ref_ngrams else 0.0
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def lcs_lengths(candidates: np.ndarray, references: np.ndarray) -> np.ndarray:
    """The longest common subsequence of each row pair of ``[B, N]`` and ``[B, M]`` id arrays.
    Row i of the DP table is the running maximum over j of ``prev[j-1] + 1`` where the ids
    match, else ``prev[j]`` (a row never grows by more than 1), so each row is one numpy
    step for the whole batch."""
    batch, m = references.shape
    prev = np.zeros((batch, m + 1), np.int64)
    for i in range(candidates.shape[1]):
        match = candidates[:, i : i + 1] == references
        step = np.where(match, prev[:, :-1] + 1, prev[:, 1:])
        prev = np.concatenate([prev[:, :1], np.maximum.accumulate(step, axis=1)], axis=1)
    return prev[:, -1]


def _lcs_f(llcs: int, m: int, n: int) -> float:
    """T2T's ``_f_lcs``: LCS F-measure with ``beta = P / R``; m, n: reference, candidate
    lengths (an empty one divides by 0, as in T2T)."""
    r_lcs = llcs / m
    p_lcs = llcs / n
    beta = p_lcs / (r_lcs + 1e-12)
    num = (1 + (beta**2)) * r_lcs * p_lcs
    denom = r_lcs + ((beta**2) * p_lcs)
    return num / (denom + 1e-12)


def rouge_2_fscore(candidates: np.ndarray, references: np.ndarray) -> np.float32:
    """T2T's ``rouge_n(candidates, references, 2)``: the float32 mean over the rows."""
    scores = [
        _bigram_f(c.tolist(), r.tolist()) for c, r in zip(candidates, references, strict=True)
    ]
    return np.mean(scores, dtype=np.float32)


def rouge_l_fscore(candidates: np.ndarray, references: np.ndarray) -> np.float32:
    """T2T's ``rouge_l_sentence_level(candidates, references)``: the float32 mean over the
    rows of ``[B, N]`` candidates and ``[B, M]`` references."""
    llcs = lcs_lengths(np.asarray(candidates), np.asarray(references))
    m, n = np.shape(references)[1], np.shape(candidates)[1]
    return np.mean([_lcs_f(int(v), m, n) for v in llcs], dtype=np.float32)


def rouge_of_pair(candidate: Sequence[int], reference: Sequence[int]) -> dict[str, float]:
    """Both scores of one pair of any lengths (T2T's functions on a batch of one)."""
    c, r = np.array([candidate], np.int64), np.array([reference], np.int64)
    return {
        "rouge_2_fscore": float(rouge_2_fscore(c, r)),
        "rouge_L_fscore": float(rouge_l_fscore(c.reshape(1, -1), r.reshape(1, -1))),
    }
