"""Compiled T2T subword encoding (numba): tokenizer, escaping and greedy segmentation of a
whole batch of texts in one pass over its code points.

Why: T2T's encoder is pure Python (about 16 us per Multi30k sentence here), and even a
cached Python path spends about 3 us per sentence in the interpreter. Here a batch is one
UTF-32 array and the loop is machine code; most of the remaining cost is building the
Python lists of ids.

* The vocabulary is a trie over code points: the child of node ``n`` for code point ``c`` is
  in an open-addressing table keyed by ``n * 0x110000 + c``, and ``terminal[n]`` is the id of
  the subtoken ending at ``n`` (-1 for none). Walking from a position as far as the trie goes
  and keeping the last terminal gives the longest vocabulary prefix: what T2T's loop over
  ``end`` from ``start + max_subtoken_len`` down finds.
* Each call keeps a token cache (one 64-byte row per distinct token, keyed exactly by its
  length and first 9 code points, the rest compared with its first occurrence), so a
  repeated token costs one probe. The same table interns substrings for the vocabulary
  builder (:func:`intern_slices`).
* Character classes are one ``uint8`` per code point: ``ALNUM`` (Unicode category L* or N*,
  the tokenizer's set, as in :mod:`t2t_repro.text_encoding.tokenizer`) and ``IN_ALPHABET`` (the
  vocabulary's alphabet, for escaping).

Hot loops index arrays with ``_U(i)`` (uint64): numba then skips its negative-index
wrap-around test, which costs about 40% of the scan. All compiled code is in this one module
on purpose: numba's on-disk cache of a function is invalidated by changes to its own file
only, not to functions it calls from other files. What Python code calls (texts in, lists of
ids out: ``CompiledVocabulary``, ``intern_substrings``) is in ``compiled_vocabulary.py``.
"""

from __future__ import annotations

import numba
import numpy as np

ALNUM = np.uint8(1)
IN_ALPHABET = np.uint8(2)
_U = np.uint64
NUM_CODE_POINTS = 0x110000
_BACKSLASH, _UNDERSCORE, _LOWER_U, _SEMICOLON, _NEWLINE, _SPACE, _ZERO = 92, 95, 117, 59, 10, 32, 48
_EMPTY_KEY = -1


@numba.njit(cache=True)
def _empty_table(min_rows, width):
    """A hash table of at least ``min_rows`` rows (a power of two), every row empty."""
    rows = 16
    while rows < min_rows:
        rows *= 2
    return np.full((rows, width), _EMPTY_KEY, np.int64)


# -- the vocabulary trie -------------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def _edge_slot(edges, key):
    """The row of ``edges`` (rows ``[key, child]``) holding ``key``, or the empty row where
    it would go (linear probing)."""
    mask = edges.shape[0] - 1
    i = np.int64((_U(key) * _U(0x9E3779B97F4A7C15)) >> _U(24)) & mask
    while edges[_U(i), 0] != _EMPTY_KEY and edges[_U(i), 0] != key:
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def build_trie(chars, starts):
    """Trie of the subtokens ``chars[starts[i]:starts[i + 1]]``: subtoken ``i`` gets id ``i``,
    a later duplicate overwrites an earlier one (T2T's dict), empty subtokens are skipped.
    Returns the edge table, sized to about 1.5 rows per edge so that it stays in cache, and
    ``terminal``."""
    n_chars = chars.shape[0]
    edges = _empty_table(2 * n_chars + 2, 2)
    terminal = np.full(n_chars + 1, -1, np.int32)
    num_nodes = 1
    for i in range(starts.shape[0] - 1):
        if starts[i] == starts[i + 1]:
            continue
        node = 0
        for k in range(starts[i], starts[i + 1]):
            key = np.int64(node) * NUM_CODE_POINTS + chars[k]
            s = _edge_slot(edges, key)
            if edges[s, 0] == _EMPTY_KEY:
                edges[s, 0] = key
                edges[s, 1] = num_nodes
                num_nodes += 1
            node = edges[s, 1]
        terminal[node] = i
    compact = _empty_table(num_nodes + num_nodes // 2, 2)
    for r in range(edges.shape[0]):
        if edges[r, 0] != _EMPTY_KEY:
            s = _edge_slot(compact, edges[r, 0])
            compact[s, 0] = edges[r, 0]
            compact[s, 1] = edges[r, 1]
    return compact, terminal[:num_nodes].copy()


# -- one token -----------------------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def _put_escaped(buf, m, c, flags):
    """Append ``c`` at ``buf[m]`` as T2T's escape step leaves it: itself when it is in the
    alphabet and not a newline, else ``\\<decimal>;``. Returns the new length."""
    if c != _NEWLINE and (flags[_U(c)] & IN_ALPHABET):
        buf[_U(m)] = c
        return m + 1
    buf[m] = _BACKSLASH
    m += 1
    digits = 1
    v = c // 10
    while v > 0:
        digits += 1
        v //= 10
    v = c
    for d in range(digits - 1, -1, -1):
        buf[m + d] = _ZERO + v % 10
        v //= 10
    m += digits
    buf[m] = _SEMICOLON
    return m + 1


@numba.njit(cache=True)
def _segment_token(cps, start, end, flags, edges, terminal, buf, out, n_out):
    """Escape token ``cps[start:end]`` into ``buf`` (T2T: ``\\`` -> ``\\\\``, ``_`` ->
    ``\\u``, then every character escaped if needed, then ``_``), segment it greedily and write
    the ids to ``out`` from ``n_out``. Returns ``(new n_out, ok)``; not ok when no subtoken
    starts at some position (then ``out`` holds a partial segmentation)."""
    m = 0
    for k in range(start, end):
        c = cps[_U(k)]
        if c == _BACKSLASH:
            m = _put_escaped(buf, m, _BACKSLASH, flags)
            m = _put_escaped(buf, m, _BACKSLASH, flags)
        elif c == _UNDERSCORE:
            m = _put_escaped(buf, m, _BACKSLASH, flags)
            m = _put_escaped(buf, m, _LOWER_U, flags)
        else:
            m = _put_escaped(buf, m, c, flags)
    buf[m] = _UNDERSCORE
    m += 1
    pos = 0
    while pos < m:
        node = 0
        best_end = -1
        j = pos
        while j < m:
            s = _edge_slot(edges, np.int64(node) * NUM_CODE_POINTS + buf[_U(j)])
            if edges[_U(s), 0] == _EMPTY_KEY:
                break
            node = edges[_U(s), 1]
            j += 1
            if terminal[_U(node)] >= 0:
                best_end = j
                out[_U(n_out)] = terminal[_U(node)]
        if best_end < 0:
            return n_out, False
        n_out += 1
        pos = best_end
    return n_out, True


# -- exact tables of code-point slices (the token cache, substring interning) ---------------
# A row (64 bytes) per distinct slice: its first 9 code points packed 3 to a word, its length,
# where its first occurrence starts (to compare the code points after the 9th), and three
# value columns: the token cache keeps the number of ids, the first id and where the ids start
# in ``out``; interning keeps the slice's id in _FIRST_ID.
_K0, _K1, _K2, _SLICE_LEN, _NUM_IDS, _FIRST_ID, _IDS_START, _SLICE_START = range(8)
_ROW_WIDTH = 8
_PACKED = 9  # code points in the key words _K0.._K2, 21 bits each


@numba.njit(cache=True, inline="always")
def _packed(cps, start, end, word):
    """Code points ``3 * word`` to ``3 * word + 2`` of ``cps[start:end]``, 21 bits each."""
    k = np.int64(0)
    for j in range(3):
        pos = start + 3 * word + j
        if pos < end:
            k |= np.int64(cps[_U(pos)]) << (21 * j)
    return k


@numba.njit(cache=True, inline="always")
def _key_words(cps, start, end):
    """The key words of slice ``cps[start:end]``; most slices are short, so the branches
    stop at their length (measured faster than packing all 9 positions)."""
    n = end - start
    if n == 0:
        return np.int64(0), np.int64(0), np.int64(0)
    k0 = np.int64(cps[_U(start)])
    k1 = np.int64(0)
    k2 = np.int64(0)
    if n > 1:
        k0 |= np.int64(cps[_U(start + 1)]) << 21
        if n > 2:
            k0 |= np.int64(cps[_U(start + 2)]) << 42
            if n > 3:
                k1 = _packed(cps, start, end, 1)
                if n > 6:
                    k2 = _packed(cps, start, end, 2)
    return k0, k1, k2


@numba.njit(cache=True, inline="always")
def _home_row(cps, start, k0, k1, k2, length, mask):
    """Where slice ``cps[start:start + length]`` (key words ``k0, k1, k2``) is looked for.
    Code points after the 9th are hashed too (only long slices pay for it), so slices that
    share their first 9 do not all start at one row."""
    h = (
        _U(k0) * _U(0x9E3779B97F4A7C15)
        ^ _U(k1) * _U(0xC2B2AE3D27D4EB4F)
        ^ _U(k2) * _U(0x165667B19E3779F9)
        ^ _U(length)
    )
    for k in range(start + _PACKED, start + length):
        h = (h ^ _U(cps[_U(k)])) * _U(0x100000001B3)
    return np.int64((h * _U(0xFF51AFD7ED558CCD)) >> _U(24)) & mask


@numba.njit(cache=True, inline="always")
def _cache_row(cache, cps, start, end, k0, k1, k2):
    """The row of ``cache`` holding slice ``cps[start:end]`` (key words ``k0, k1, k2``), or
    the empty row where it would go."""
    mask = cache.shape[0] - 1
    n = end - start
    i = _home_row(cps, start, k0, k1, k2, n, mask)
    while cache[_U(i), _K0] != _EMPTY_KEY:
        if (
            cache[_U(i), _K0] == k0
            and cache[_U(i), _K1] == k1
            and cache[_U(i), _K2] == k2
            and cache[_U(i), _SLICE_LEN] == n
        ):
            first = cache[_U(i), _SLICE_START]
            same = True
            for k in range(_PACKED, n):
                if cps[_U(first + k)] != cps[_U(start + k)]:
                    same = False
                    break
            if same:
                return i
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def _grown_cache(cache, cps):
    """The same rows in a table twice as large (``cps``: the array the slices are in)."""
    grown = _empty_table(2 * cache.shape[0], cache.shape[1])
    mask = grown.shape[0] - 1
    for r in range(cache.shape[0]):
        if cache[r, _K0] != _EMPTY_KEY:
            i = _home_row(
                cps,
                cache[r, _SLICE_START],
                cache[r, _K0],
                cache[r, _K1],
                cache[r, _K2],
                cache[r, _SLICE_LEN],
                mask,
            )
            while grown[i, _K0] != _EMPTY_KEY:
                i = (i + 1) & mask
            grown[i, :] = cache[r, :]
    return grown


# -- a batch -------------------------------------------------------------------------------
@numba.njit(cache=True)
def encode_texts(cps, text_starts, flags, edges, terminal, tokenize):
    """Ids of every text ``cps[text_starts[i]:text_starts[i + 1]]``, flat, with the start of
    each text's ids. With ``tokenize`` a text is split into T2T's tokens (runs of alphanumeric
    / other characters; a one-space run is dropped unless it is the first or the last run),
    else it is one token. Returns ``(ids, id_starts, failed)``: ``failed`` is the index of the
    first text with an unencodable token (``id_starts`` is then valid up to it), or -1."""
    n_texts = text_starts.shape[0] - 1
    longest = 1
    for i in range(n_texts):
        longest = max(longest, text_starts[i + 1] - text_starts[i])
    # An escaped character takes at most 9 code points ("\1114111;"; "\" and "_" become two
    # characters, each at most "\117;"), plus the final "_".
    buf = np.empty(10 * longest + 1, np.int32)
    out = np.empty(cps.shape[0] // 2 + 64, np.int32)
    id_starts = np.empty(n_texts + 1, np.int64)
    cache = _empty_table(min(4096, cps.shape[0] + 1), _ROW_WIDTH)  # a short call stays cheap
    cached = 0
    n_out = 0
    for i in range(n_texts):
        id_starts[i] = n_out
        a = text_starts[i]
        b = text_starts[i + 1]
        # A text adds at most one id per escaped code point: 9 per character, 1 per token.
        if n_out + 11 * (b - a) + 1 > out.shape[0]:
            grown = np.empty(2 * out.shape[0] + 11 * (b - a) + 1, np.int32)
            grown[:n_out] = out[:n_out]
            out = grown
        if a == b:
            if not tokenize:  # one empty token, escaped to "_" (as in T2T)
                n_out, ok = _segment_token(cps, a, b, flags, edges, terminal, buf, out, n_out)
                if not ok:
                    return out[:n_out], id_starts, i
            continue
        p = a
        while p < b:
            c = cps[_U(p)]
            q = p + 1
            if tokenize:
                kind = flags[_U(c)] & ALNUM
                while q < b and (flags[_U(cps[_U(q)])] & ALNUM) == kind:
                    q += 1
            else:
                q = b
            # The token is cps[p:q], unless it is a one-space run inside the text.
            if not (q - p == 1 and c == _SPACE and p != a and q != b):
                # _key_words written out: reusing ``c`` here measured about 8% faster.
                k0 = np.int64(c)
                k1 = np.int64(0)
                k2 = np.int64(0)
                if q - p > 1:
                    k0 |= np.int64(cps[_U(p + 1)]) << 21
                    if q - p > 2:
                        k0 |= np.int64(cps[_U(p + 2)]) << 42
                        if q - p > 3:
                            k1 = _packed(cps, p, q, 1)
                            if q - p > 6:
                                k2 = _packed(cps, p, q, 2)
                row = _U(_cache_row(cache, cps, p, q, k0, k1, k2))
                if cache[row, _K0] != _EMPTY_KEY:
                    n = cache[row, _NUM_IDS]
                    if n == 1:
                        out[_U(n_out)] = cache[row, _FIRST_ID]
                    else:
                        first = cache[row, _IDS_START]
                        for t in range(n):
                            out[_U(n_out + t)] = out[_U(first + t)]
                    n_out += n
                else:
                    before = n_out
                    n_out, ok = _segment_token(cps, p, q, flags, edges, terminal, buf, out, n_out)
                    if not ok:
                        return out[:n_out], id_starts, i
                    cache[row, _K0] = k0
                    cache[row, _K1] = k1
                    cache[row, _K2] = k2
                    cache[row, _SLICE_LEN] = q - p
                    cache[row, _NUM_IDS] = n_out - before
                    cache[row, _FIRST_ID] = out[before]
                    cache[row, _IDS_START] = before
                    cache[row, _SLICE_START] = p
                    cached += 1
                    if 4 * cached > 3 * cache.shape[0]:  # at most 3/4 full
                        cache = _grown_cache(cache, cps)
            p = q
    id_starts[n_texts] = n_out
    return out[:n_out], id_starts, -1


@numba.njit(cache=True)
def intern_slices(cps, starts, lengths):
    """Ids of the slices ``cps[starts[i]:starts[i] + lengths[i]]``, equal slices equal ids,
    numbered in order of first appearance; and each id's first slice (start, length)."""
    ids = np.empty(starts.shape[0], np.int64)
    table = _empty_table(4096, _ROW_WIDTH)
    n_ids = 0
    for i in range(starts.shape[0]):
        p = starts[i]
        q = p + lengths[i]
        k0, k1, k2 = _key_words(cps, p, q)
        row = _cache_row(table, cps, p, q, k0, k1, k2)
        if table[row, _K0] == _EMPTY_KEY:
            table[row, _K0] = k0
            table[row, _K1] = k1
            table[row, _K2] = k2
            table[row, _SLICE_LEN] = q - p
            table[row, _SLICE_START] = p
            table[row, _FIRST_ID] = n_ids
            ids[i] = n_ids
            n_ids += 1
            if 4 * n_ids > 3 * table.shape[0]:
                table = _grown_cache(table, cps)
        else:
            ids[i] = table[row, _FIRST_ID]
    first_start = np.empty(n_ids, np.int64)
    first_len = np.empty(n_ids, np.int64)
    for r in range(table.shape[0]):
        if table[r, _K0] != _EMPTY_KEY:
            first_start[table[r, _FIRST_ID]] = table[r, _SLICE_START]
            first_len[table[r, _FIRST_ID]] = table[r, _SLICE_LEN]
    return ids, first_start, first_len
