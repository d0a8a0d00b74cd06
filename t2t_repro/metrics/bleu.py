"""BLEU, every number labelled with exactly how it was computed
(``tensor2tensor/utils/bleu_hook.py``, ``compute_bleu``; ``utils/get_ende_bleu.sh``).

Three conventions matter for this paper and they are not comparable with each other:

- sacreBLEU (13a or intl tokenisation, cased or not): the modern standard, with its signature.
- ``t2t-bleu``: T2T's corpus BLEU-4 (``compute_bleu``, with its zero-match smoothing) on
  T2T's own mteval-v14 international tokens of detokenised text (``bleu_tokenize``, which
  differs from sacreBLEU's intl tokens on ``\\`` and on numbers such as ``²``).
- The paper's EN-DE number (``get_ende_bleu.sh``): Moses unicode-punctuation replacement and
  tokenisation (with HTML escaping, tokenizer.perl's default), hyphenated compounds split as
  ``X ##AT##-##AT## Y``, then cased multi-bleu over the tokens.

The other tokenisers come from sacreBLEU and sacremoses (the maintained ports of mteval and
Moses).
A teacher-forced or subword-level approximation is never reported as BLEU here.
"""

from __future__ import annotations

import collections
import functools
import math
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu

_COMPOUND = re.compile(r"(\S)-(\S)")


@dataclass(frozen=True)
class BleuResult:
    name: str
    score: float  # 0-100
    definition: str

    def as_dict(self) -> dict:
        return {"name": self.name, "score": self.score, "definition": self.definition}


def _ngrams(tokens: Sequence[str], max_order: int) -> collections.Counter:
    counts = collections.Counter()
    for order in range(1, max_order + 1):
        for i in range(len(tokens) - order + 1):
            counts[tuple(tokens[i : i + order])] += 1
    return counts


def compute_bleu(
    references: Sequence[Sequence[str]],
    translations: Sequence[Sequence[str]],
    max_order: int = 4,
    use_bp: bool = True,
) -> float:
    """T2T's corpus BLEU in [0, 1]: clipped n-gram matches summed over the corpus.

    An order with candidates but no match gets precision 1/(2^k * candidates), k counting
    such orders so far (T2T's smoothing); BP = exp(1 - 1/ratio) when ratio < 1.
    """
    matches = [0] * max_order
    possible = [0] * max_order
    ref_length = hyp_length = 0
    for ref, hyp in zip(references, translations, strict=True):
        ref_length += len(ref)
        hyp_length += len(hyp)
        overlap = _ngrams(ref, max_order) & _ngrams(hyp, max_order)
        for ngram, count in overlap.items():
            matches[len(ngram) - 1] += count
        for order in range(1, max_order + 1):
            possible[order - 1] += max(0, len(hyp) - order + 1)
    precisions, smooth = [0.0] * max_order, 1.0
    for i in range(max_order):
        if possible[i] > 0:
            if matches[i] > 0:
                precisions[i] = matches[i] / possible[i]
            else:
                smooth *= 2
                precisions[i] = 1.0 / (smooth * possible[i])
    if max(precisions) <= 0:
        return 0.0
    geo_mean = math.exp(sum(math.log(p) for p in precisions if p > 0) / max_order)
    bp = 1.0
    if use_bp and hyp_length:
        ratio = hyp_length / max(ref_length, 1)
        bp = math.exp(1 - 1.0 / ratio) if ratio < 1.0 else 1.0
    elif use_bp:
        bp = 0.0
    return geo_mean * bp


def approx_bleu(outputs, targets) -> np.float32:
    """T2T's ``approx_bleu_score`` of one eval batch (``utils/metrics.py``, ``bleu_score``):
    ``compute_bleu`` of the argmax id rows against the target rows, each a whole padded row,
    as a float32 (T2T's ``py_func``)."""
    return np.float32(compute_bleu(list(targets), list(outputs)))


@functools.cache
def _t2t_tokenizer_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """T2T's ``bleu_hook.UnicodeRegex``: punctuation is every code point below
    ``sys.maxunicode`` of a Unicode category P, symbols of a category S, each pasted into a
    ``[...]`` class unescaped. So a backslash, which escapes the ``]`` after it there, is not
    split off, and a digit is ``\\d`` (decimal digits only, not ``²`` or ``½``): sacreBLEU's
    intl tokenizer differs on both. Built on first use (~0.2 s): 1.1M code points.

    The classes are written here as ranges of escaped code points, which ``re`` matches
    many times faster than T2T's thousands of characters. They are the sets T2T's classes
    parse to: every symbol; every punctuation mark but the backslash (in T2T's class ``,-.``
    is a range of those three and ``\\]`` a ``]``; no other character there is special)."""

    def category(prefix: str) -> list[int]:
        return [c for c in range(sys.maxunicode) if unicodedata.category(chr(c))[0] == prefix]

    def ranges(code_points: list[int]) -> str:
        runs: list[list[int]] = []
        for c in code_points:
            if runs and c == runs[-1][1] + 1:
                runs[-1][1] = c
            else:
                runs.append([c, c])
        return "".join(
            re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in runs
        )

    punct = ranges([c for c in category("P") if c != ord("\\")])
    return (
        re.compile(r"([^\d])([" + punct + "])"),
        re.compile("([" + punct + r"])([^\d])"),
        re.compile("([" + ranges(category("S")) + "])"),
    )


def bleu_tokenize(text: str) -> list[str]:
    """T2T's ``bleu_tokenize`` (``tensor2tensor/utils/bleu_hook.py``), mteval-v14's
    international tokenisation: punctuation split off unless between digits, symbols always."""
    before_punct, after_punct, symbol = _t2t_tokenizer_patterns()
    text = before_punct.sub(r"\1 \2 ", text)
    text = after_punct.sub(r" \1 \2", text)
    return symbol.sub(r" \1 ", text).split()


def t2t_bleu(
    references: Sequence[str], hypotheses: Sequence[str], case_sensitive: bool = True
) -> float:
    """T2T's ``t2t-bleu`` number (x100), in T2T's float32: ``bleu_hook.compute_bleu`` returns
    ``np.float32(bleu)`` and ``t2t_bleu.py`` multiplies it by 100, so a score printed with two
    decimals rounds as T2T's does (3.8749999 in float64 is 3.875 in float32)."""
    fold = (lambda s: s) if case_sensitive else str.lower
    bleu = compute_bleu(
        [bleu_tokenize(fold(r)) for r in references], [bleu_tokenize(fold(h)) for h in hypotheses]
    )
    return float(np.float32(100) * np.float32(bleu))


def _sacrebleu_metric(tokenize: str, lowercase: bool) -> sacrebleu.metrics.BLEU:
    # force=True: no per-call warning about tokenized input (the t2t-bleu tool prints its own
    # single one; a dev-BLEU curve must not repeat it at every eval).
    return sacrebleu.metrics.BLEU(tokenize=tokenize, lowercase=lowercase, force=True)


def sacrebleu_score(
    references: Sequence[str],
    hypotheses: Sequence[str],
    tokenize: str = "13a",
    lowercase: bool = False,
) -> float:
    """sacreBLEU's corpus score (0-100); the defaults are its standard 13a cased BLEU."""
    metric = _sacrebleu_metric(tokenize, lowercase)
    return metric.corpus_score(list(hypotheses), [list(references)]).score


def sacrebleu_scores(references: Sequence[str], hypotheses: Sequence[str]) -> list[BleuResult]:
    """sacreBLEU 13a and intl, cased and uncased, each with sacreBLEU's signature."""
    results = []
    for tokenize in ("13a", "intl"):
        for lowercase in (False, True):
            metric = _sacrebleu_metric(tokenize, lowercase)
            score = metric.corpus_score(list(hypotheses), [list(references)])
            case = "uncased" if lowercase else "cased"
            results.append(
                BleuResult(
                    f"sacreBLEU {tokenize} {case}",
                    score.score,
                    f"sacreBLEU signature {metric.get_signature()}",
                )
            )
    return results


def split_compounds(tokenized: str) -> str:
    """``X-Y`` -> ``X ##AT##-##AT## Y`` exactly as get_ende_bleu.sh's perl one-liner."""
    return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", tokenized)


def paper_tokenize(text: str, lang: str = "de") -> str:
    """Moses replace-unicode-punctuation + tokenizer.perl (escaping on), then compounds split."""
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    normalized = MosesPunctNormalizer(lang=lang).replace_unicode_punct(text)
    tokens = MosesTokenizer(lang=lang).tokenize(normalized, return_str=True, escape=True)
    return split_compounds(tokens)


def paper_ende_bleu(
    references: Sequence[str], hypotheses: Sequence[str], lang: str = "de"
) -> BleuResult:
    """The paper's EN-DE BLEU: tokenised, compound-split, cased multi-bleu."""
    refs = [paper_tokenize(r, lang) for r in references]
    hyps = [paper_tokenize(h, lang) for h in hypotheses]
    metric = sacrebleu.metrics.BLEU(tokenize="none", smooth_method="none", force=True)
    score = metric.corpus_score(hyps, [refs]).score
    return BleuResult(
        "paper BLEU (tokenized, compound-split)",
        score,
        f"Moses replace-unicode-punctuation + tokenizer.perl -l {lang} (escaped), "
        "X-Y -> X ##AT##-##AT## Y, cased multi-bleu.perl on tokens "
        "(get_ende_bleu.sh; comparable with the paper's EN-DE numbers)",
    )


def looks_tokenized(hypotheses: Sequence[str]) -> bool:
    """True when most lines end in a space-separated period (tokenized text)."""
    ends = sum(1 for h in hypotheses if h.rstrip().endswith(" ."))
    return bool(hypotheses) and ends > 0.5 * len(hypotheses)


def all_scores(
    references: Sequence[str], hypotheses: Sequence[str], target_lang: str = "de"
) -> list[BleuResult]:
    """Every labelled variant."""
    results = sacrebleu_scores(references, hypotheses)
    for cased in (True, False):
        results.append(
            BleuResult(
                f"t2t-bleu {'cased' if cased else 'uncased'}",
                t2t_bleu(references, hypotheses, cased),
                "T2T compute_bleu (BLEU-4, T2T zero-match smoothing) on mteval-v14 international "
                f"tokens{'' if cased else ', lowercased'}",
            )
        )
    results.append(paper_ende_bleu(references, hypotheses, target_lang))
    return results
