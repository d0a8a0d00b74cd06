"""T2T's subword vocabulary builder, vectorised, with the same result.

T2T's ``SubwordTextEncoder.build_from_token_counts`` runs ``num_iterations`` rounds of:

1. segment every escaped token greedily (longest prefix first) with the current vocabulary
   and, at every segment start, add the token's count to every substring that starts there
   (lengths 1 .. ``max_subtoken_length - 1``, or to the end of the token when unset);
2. take the substrings whose count is >= ``min_count`` from longest to shortest, accept each
   whose *current* count is still >= ``min_count`` (alphabet characters are added later
   anyway) and subtract that count from all its proper prefixes;
3. add every alphabet character with its current count, sort by ``(count, string)``
   descending and put the escaped reserved tokens in front.

Here every distinct substring (up to the longest length any vocabulary entry can have) of
every escaped token is interned once per token-count table (compiled,
:func:`t2t_repro.text_encoding.compiled_vocabulary.intern_substrings`); each
``(token, start)`` position owns a contiguous run of substring ids ordered by length. An
iteration is then array work: the greedy segmentation of all tokens is a segmented max over
"in vocabulary" flags plus a frontier walk, the counting is one ``bincount`` over the runs
of the segment starts, and the longest-to-shortest acceptance is a sweep over lengths that
pushes the subtracted amounts from each substring to its one-character-shorter prefix
(subtracting a count from all proper prefixes is the same as passing it down the prefix
chain). The first iteration (alphabet-only vocabulary, every position a segment start) does
not depend on ``min_count`` and is computed once for all the builds of a bisection.

The result is identical to T2T's, including the order of equal-count entries (ties are
broken by the string, descending, as Python's tuple sort does). Counts must be integers.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from t2t_repro.text_encoding.escaping import ESCAPE_CHARS, escape_token
from t2t_repro.text_encoding.reserved_tokens import RESERVED_TOKENS

# float64 bincount is exact while every partial sum stays below 2**53.
_EXACT_FLOAT_LIMIT = 2**52


def check_reserved_tokens(reserved_tokens: Sequence[str] | None) -> list[str]:
    if reserved_tokens is None:
        return list(RESERVED_TOKENS)
    for default, proposed in zip(RESERVED_TOKENS, reserved_tokens, strict=False):  # a prefix
        if default != proposed:
            raise ValueError(
                f"RESERVED_TOKENS {RESERVED_TOKENS} must be a prefix of reserved_tokens "
                f"{list(reserved_tokens)}"
            )
    return list(reserved_tokens)


class SubwordBuilder:
    """Prepared state for building vocabularies from one token-count table."""

    def __init__(
        self,
        token_counts: Mapping[str, int],
        reserved_tokens=None,
        max_subtoken_length: int | None = None,
    ):
        self.reserved_tokens = check_reserved_tokens(reserved_tokens)
        self.max_subtoken_length = max_subtoken_length
        tokens = list(token_counts.keys())
        for tok in tokens:
            if not isinstance(tok, str):
                raise ValueError(f"Expected str tokens in token_counts, got {type(tok)}: {tok!r}")
        raw_weights = [token_counts[t] for t in tokens]
        for tok, w in zip(tokens, raw_weights, strict=True):
            if (
                type(w) is not int
                and not isinstance(w, numbers.Integral)
                and not (isinstance(w, numbers.Real) and float(w).is_integer())
            ):
                raise ValueError(f"token count for {tok!r} must be an integer, got {w!r}")
        weights = np.array([int(w) for w in raw_weights], dtype=np.int64)

        alphabet = set()
        for tok in tokens:
            alphabet.update(tok)
        for tok in self.reserved_tokens:
            alphabet.update(tok)
        alphabet |= ESCAPE_CHARS
        self.alphabet = frozenset(alphabet)
        self.escaped_reserved = [escape_token(t, self.alphabet) for t in self.reserved_tokens]

        escaped = [escape_token(t, self.alphabet) for t in tokens]
        # Longest substring that is counted; longest any vocabulary entry can be.
        if max_subtoken_length is None:
            count_limit = max((len(e) for e in escaped), default=1)
        else:
            count_limit = max(int(max_subtoken_length) - 1, 0)
        seg_limit = max([count_limit, 1] + [len(r) for r in self.escaped_reserved])
        self._count_limit = count_limit

        # Global position p = character offset in the concatenation of all escaped
        # tokens; position p of token t (start s = p - tok_off[t]) owns the triples
        # [tstart[p], tstart[p+1]): the substrings esc_t[s:s+k], k = 1 .. ntrip[p].
        lens = np.fromiter((len(e) for e in escaped), dtype=np.int64, count=len(escaped))
        tok_off = np.zeros(len(escaped) + 1, dtype=np.int64)
        np.cumsum(lens, out=tok_off[1:])
        n_pos = int(tok_off[-1])
        pos_tok = np.repeat(np.arange(len(escaped), dtype=np.int64), lens)
        pos_s = np.arange(n_pos, dtype=np.int64) - tok_off[pos_tok]
        ntrip = np.minimum(lens[pos_tok] - pos_s, seg_limit)
        tstart = np.zeros(n_pos + 1, dtype=np.int64)
        np.cumsum(ntrip, out=tstart[1:])
        n_trip = int(tstart[-1])
        # Length (1-based) of each triple, and its slice of the concatenation.
        trip_pos = np.repeat(np.arange(n_pos, dtype=np.int64), ntrip)
        klen = np.arange(n_trip, dtype=np.int64) - tstart[trip_pos] + 1
        # Ids in order of first appearance, as a dict over the substrings would give.
        # (Imported here: it loads numba, which a tool's start does not need; text_encoder.py.)
        from t2t_repro.text_encoding.compiled_vocabulary import intern_substrings

        trip_a, strings = intern_substrings("".join(escaped), trip_pos, klen)
        del trip_pos
        n_ids = len(strings)

        # Relabel substring ids in order of length so each length is one contiguous block
        # and a substring's prefix (one shorter) lives in the previous block.
        id_len = np.zeros(n_ids, dtype=np.int64)
        id_len[trip_a] = klen
        order = np.argsort(id_len, kind="stable")
        relabel = np.empty(n_ids, dtype=np.int64)
        relabel[order] = np.arange(n_ids, dtype=np.int64)
        trip_a = relabel[trip_a]
        parent = np.full(n_ids, -1, dtype=np.int64)
        has_parent = klen >= 2
        parent[trip_a[has_parent]] = trip_a[np.flatnonzero(has_parent) - 1]
        id_len = id_len[order]
        self._strings = list(map(strings.__getitem__, order.tolist()))
        self._table = dict(zip(self._strings, itertools.count()))
        del strings
        max_len = int(id_len[-1]) if n_ids else 0
        self._level_off = np.searchsorted(id_len, np.arange(max_len + 2), side="left")
        self._parent = parent
        self._n_ids = n_ids

        self._trip = trip_a
        self._klen = klen
        self._tstart = tstart
        self._ncount = np.minimum(ntrip, count_limit)
        self._pos_weight = weights[pos_tok]
        self._tok_start = tok_off[:-1]
        self._tok_end = tok_off[1:]
        # A substring occurs at most len(token) times per token.
        total = int(np.abs(weights).sum()) * max(int(lens.max()) if lens.size else 1, 1)
        self._float_ok = total < _EXACT_FLOAT_LIMIT
        self._first_counts: np.ndarray | None = None
        # Alphabet characters, their ids (-1 when never seen in an escaped token).
        self._alphabet_list = sorted(self.alphabet)
        self._alphabet_ids = np.array(
            [self._table.get(a, -1) for a in self._alphabet_list], dtype=np.int64
        )

    # ---------------------------------------------------------------------------------
    def _count(self, starts: np.ndarray) -> np.ndarray:
        """Weighted counts of every substring run that begins at a segment start."""
        n = self._ncount[starts]
        total = int(n.sum())
        if total == 0:
            return np.zeros(self._n_ids, dtype=np.int64)
        first = np.cumsum(n) - n
        idx = np.repeat(self._tstart[starts] - first, n) + np.arange(total, dtype=np.int64)
        ids = self._trip[idx]
        w = np.repeat(self._pos_weight[starts], n)
        if self._float_ok:
            counts = np.bincount(ids, weights=w.astype(np.float64), minlength=self._n_ids)
            return counts.astype(np.int64)
        counts = np.zeros(self._n_ids, dtype=np.int64)
        np.add.at(counts, ids, w)
        return counts

    def _segment_starts(self, in_vocab: np.ndarray) -> np.ndarray:
        """Global positions where T2T's greedy segmentation starts a subtoken."""
        if len(self._trip) == 0:
            return np.zeros(0, dtype=np.int64)
        vals = np.where(in_vocab[self._trip], self._klen, 0)
        best = np.maximum.reduceat(vals, self._tstart[:-1])
        if best.size and best.min() == 0:
            raise AssertionError("Token substring not found in subtoken vocabulary.")
        parts = []
        frontier = self._tok_start
        ends = self._tok_end
        while frontier.size:
            parts.append(frontier)
            nxt = frontier + best[frontier]
            keep = nxt < ends
            frontier = nxt[keep]
            ends = ends[keep]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _select(self, counts: np.ndarray, min_count: int) -> list[str]:
        """Longest-to-shortest acceptance; returns the sorted subtoken list (no reserved)."""
        pending = np.zeros(self._n_ids, dtype=np.int64)
        off = self._level_off
        acc_ids = []
        acc_cnt = []
        for length in range(len(off) - 2, 0, -1):
            a, b = int(off[length]), int(off[length + 1])
            if a == b:
                continue
            orig = counts[a:b]
            pend = pending[a:b]
            cur = orig - pend
            acc = (orig >= min_count) & (cur >= min_count)
            if acc.any():
                where = np.flatnonzero(acc)
                acc_ids.append(where + a)
                acc_cnt.append(cur[where])
            if length >= 2:
                flow = pend + np.where(acc, cur, 0)
                nz = np.flatnonzero(flow)
                if nz.size:
                    pa = int(off[length - 1])
                    idx = self._parent[a + nz] - pa
                    if self._float_ok:
                        pending[pa:a] += np.bincount(
                            idx, weights=flow[nz].astype(np.float64), minlength=a - pa
                        ).astype(np.int64)
                    else:
                        pending[pa:a] += _sum_to(idx, flow[nz], a - pa)
        final = counts - pending
        alphabet = self.alphabet
        strings = self._strings
        chosen = []
        if acc_ids:
            ids = np.concatenate(acc_ids).tolist()
            cnts = np.concatenate(acc_cnt).tolist()
            chosen = [
                (c, strings[i])
                for i, c in zip(ids, cnts, strict=True)
                if strings[i] not in alphabet
            ]
        # Id -1 (a character no escaped token contains) reads the appended 0.
        alpha_counts = np.append(final, 0)[self._alphabet_ids].tolist()
        chosen.extend(zip(alpha_counts, self._alphabet_list, strict=True))
        chosen.sort(reverse=True)
        return [s for _, s in chosen]

    def build(self, min_count: int, num_iterations: int = 4) -> list[str]:
        """All subtoken strings (escaped reserved tokens first), as T2T would build them."""
        if num_iterations < 1:
            raise ValueError("num_iterations must be >= 1")
        if min_count < 1:
            min_count = 1
        vocab: list[str] = []
        for it in range(num_iterations):
            if it == 0:
                if self._first_counts is None:
                    all_starts = np.arange(len(self._tstart) - 1, dtype=np.int64)
                    self._first_counts = self._count(all_starts)
                counts = self._first_counts
            else:
                in_vocab = np.zeros(self._n_ids, dtype=bool)
                ids = [self._table.get(s, -1) for s in vocab if s]
                ids = np.array([i for i in ids if i >= 0], dtype=np.int64)
                in_vocab[ids] = True
                counts = self._count(self._segment_starts(in_vocab))
            vocab = self._select(counts, min_count)
            if self.reserved_tokens:
                vocab = self.escaped_reserved + vocab
        return vocab

    def build_to_target_size(
        self, target_size: int, min_val: int, max_val: int, num_iterations: int = 4
    ) -> list[str]:
        """T2T's recursive bisection over ``min_count`` for a vocabulary near ``target_size``
        (within 1% accepted; otherwise the closer of the two tries)."""

        def bisect(lo: int, hi: int) -> list[str]:
            present = (lo + hi) // 2
            vocab = self.build(present, num_iterations)
            if abs(len(vocab) - target_size) * 100 < target_size or lo >= hi or present < 2:
                return vocab
            if len(vocab) > target_size:
                other = bisect(present + 1, hi)
            else:
                other = bisect(lo, present - 1)
            if abs(len(other) - target_size) < abs(len(vocab) - target_size):
                return other
            return vocab

        return bisect(min_val, max_val)


def _sum_to(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, index, values)
    return out
