"""The Python side of the compiled subword kernel (``subword_kernel.py``): texts become one
array of code points, the kernel's arrays become lists of ids or strings.

Why apart from the kernel: the kernel holds only compiled code (numba's cache of a function
follows its own file); this module holds what the encoder (``CompiledVocabulary``, for
``text_encoder.py``) and the vocabulary builder (``intern_substrings``, for
``subword_builder.py``) call, with the character flags the kernel reads.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from t2t_repro.text_encoding.subword_kernel import (
    ALNUM,
    IN_ALPHABET,
    NUM_CODE_POINTS,
    build_trie,
    encode_texts,
    intern_slices,
)
from t2t_repro.text_encoding.tokenizer import ALNUM_CLASS

_alnum_flags: np.ndarray | None = None


def alnum_flags() -> np.ndarray:
    """``ALNUM`` for every code point the tokenizer counts as alphanumeric (T2T's L*/N* set,
    :data:`t2t_repro.text_encoding.tokenizer.ALNUM_CLASS`); computed once per process (0.1 s)."""
    global _alnum_flags
    if _alnum_flags is None:
        every = "".join(map(chr, range(NUM_CODE_POINTS)))
        flags = np.zeros(NUM_CODE_POINTS, np.uint8)
        for m in re.finditer(ALNUM_CLASS + "+", every):
            flags[m.start() : m.end()] = ALNUM
        _alnum_flags = flags
    return _alnum_flags


def starts_of(strings: Sequence[str]) -> np.ndarray:
    """Where each of ``strings`` starts in ``"".join(strings)``, and the total length last."""
    starts = np.zeros(len(strings) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, strings), np.int64, len(strings)), out=starts[1:])
    return starts


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` as int32 (a lone surrogate is one unit, as in ``str``)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.int32)


def intern_substrings(
    text: str, starts: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Ids of the substrings ``text[s:s + n]`` for ``s, n`` in ``zip(starts, lengths)``
    (equal substrings, equal ids; numbered in order of first appearance) and the distinct
    substrings in id order: a dict over all substrings without making each one a ``str``."""
    starts = np.ascontiguousarray(starts, np.int64)
    lengths = np.ascontiguousarray(lengths, np.int64)
    ids, first_start, first_len = intern_slices(code_points(text), starts, lengths)
    strings = list(
        map(text.__getitem__, map(slice, first_start.tolist(), (first_start + first_len).tolist()))
    )
    return ids, strings


class CompiledVocabulary:
    """A vocabulary's trie and character flags, ready for :meth:`encode`."""

    def __init__(self, subtoken_strings: Sequence[str], alphabet) -> None:
        chars = code_points("".join(subtoken_strings))
        self.edges, self.terminal = build_trie(chars, starts_of(subtoken_strings))
        flags = alnum_flags().copy()
        flags[code_points("".join(alphabet))] |= IN_ALPHABET
        self.flags = flags
        self.encode([""])  # compile (or load from numba's cache) now, not on the first batch

    def encode(self, texts: Sequence[str], tokenize: bool = True) -> tuple[list[list[int]], int]:
        """``(ids of each text, index of the first text that cannot be encoded or -1)``; on a
        failure the lists stop before that text. ``texts`` must be ``str`` (else TypeError)."""
        gc_was_enabled = gc.isenabled()
        # Nothing cyclic is made here: keep the collector from running (over this call's
        # 10^5 small lists, or over earlier garbage) until the call returns.
        gc.disable()
        try:
            cps = code_points("".join(texts))
            ids, id_starts, failed = encode_texts(
                cps, starts_of(texts), self.flags, self.edges, self.terminal, tokenize
            )
            n = len(texts) if failed < 0 else failed
            flat = ids.tolist()
            bounds = id_starts[: n + 1].tolist()
            return [flat[a:b] for a, b in pairwise(bounds)], failed
        finally:
            if gc_was_enabled:
                gc.enable()
