"""One id per word, with word-shape classes for rare words (a small-treebank source vocabulary).

A subword source splits a rare word into several ids, so the input position of word k moves
with every split word before it. A parser's decoder has to find "the word this POS slot is for";
with one id per word, word k is simply input position k (the ``slot_signal`` hparam gives the
decoder the matching position). Words seen fewer than ``min_count`` times in training are
encoded as their shape class (``word_signature``: capitalisation, digits, hyphen, a common
suffix, as in classic treebank parsers' unknown-word classes), so the model learns what to do
with an unseen word from the training set's rare ones.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from t2t_repro.text_encoding.token_encoder import RESERVED, UNK_ID, TokenTextEncoder

# Checked in order; the first that ends the word (any case) after >= 2 other characters wins,
# unless the word ends in -ss. The same patterns run in the graph (graph_word_encoder.py).
SUFFIXES = (
    "ing", "ed", "ly", "ion", "ies", "es", "er", "est", "al", "ity", "ive", "ic", "ous",
    "able", "ible", "ment", "ness", "ful", "less", "ize", "ist", "ant", "ent", "an", "y", "s",
)  # fmt: skip
SUFFIX_PATTERNS = tuple(r"(?is).{2,}" + suffix for suffix in SUFFIXES)
NO_SUFFIX_PATTERN = r"(?is).*ss"


def _is_letter(c: str) -> bool:
    return unicodedata.category(c).startswith("L")


def _is_upper(c: str) -> bool:
    return unicodedata.category(c) == "Lu"


def word_signature(word: str) -> str:
    """The shape class of a word: ``<unk-Cap-num-dash-ing>`` style, one token without spaces.

    Letters, capitals and digits are Unicode categories L, Lu and Nd (what the graph's regular
    expressions test, so that an exported model encodes exactly as this does)."""
    parts = ["<unk"]
    letters = [c for c in word if _is_letter(c)]
    if letters and all(_is_upper(c) for c in letters):
        parts.append("CAPS")
    elif word[:1] and _is_upper(word[0]):
        parts.append("Cap")
    elif any(_is_upper(c) for c in word):
        parts.append("mixed")
    if any(unicodedata.category(c) == "Nd" for c in word):
        parts.append("num")
    if "-" in word:
        parts.append("dash")
    if not letters:
        parts.append("sym")
    if not re.fullmatch(NO_SUFFIX_PATTERN, word):
        suffix = next(
            (s for s, p in zip(SUFFIXES, SUFFIX_PATTERNS, strict=True) if re.fullmatch(p, word)),
            None,
        )
        if suffix:
            parts.append(suffix)
    return "-".join(parts) + ">"


def build_word_vocab(
    sentences: Iterable[str], min_count: int = 2, keep: Iterable[str] = ()
) -> list[str]:
    """Reserved tokens, the signatures of rare training words, then the words seen at least
    ``min_count`` times (most frequent first, ties by spelling), then any of ``keep`` not yet
    in (words that must stay themselves, e.g. punctuation, whose tags a parser must know)."""
    counts = Counter(w for s in sentences for w in s.split())
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    words += sorted(set(keep) - set(words))
    signatures = Counter(word_signature(w) for w, c in counts.items() if c < min_count)
    classes = sorted(signatures, key=lambda s: (-signatures[s], s))
    return list(RESERVED) + classes + words


class WordTextEncoder(TokenTextEncoder):
    """``TokenTextEncoder`` whose unknown words become their shape class (``<UNK>`` if the
    class is not in the vocabulary either). Decoding a class id gives the class token."""

    graph_kind = "words"  # in the graph: GraphWordEncoder

    def encode(self, text: str) -> list[int]:
        ids = self._ids
        return [ids[w] if w in ids else ids.get(word_signature(w), UNK_ID) for w in text.split()]

    def class_ids(self, keep: Iterable[str] = ()) -> list[int]:
        """For each id, the id of its word's shape class, or the id itself: for reserved
        tokens, the classes, the words of ``keep`` (punctuation) and words whose class is not in
        the vocabulary. What word dropout (``data/word_dropout.py``) replaces a word by."""
        ids, keep = self._ids, set(keep)
        out = list(range(len(self.tokens)))
        for i, token in enumerate(self.tokens):
            if i >= len(RESERVED) and token not in keep and not token.startswith("<unk"):
                out[i] = ids.get(word_signature(token), i)
        return out
