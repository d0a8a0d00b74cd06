"""Straightforward pure-Python model of T2T's invertible tokenizer and SubwordTextEncoder.

Written from T2T's algorithm to behave like
``tensor2tensor/data_generators/{tokenizer,text_encoder}.py`` step by step: per-character
alphanumeric classification, per-token escaping, a 2**20-slot hash cache keyed by token,
greedy longest-prefix segmentation bounded by the longest subtoken, and the iterative
vocabulary builder that segments and counts every token on every iteration.

It exists ONLY as the yardstick for ``bench/bench_subword.py`` and the equivalence tests;
the library (``t2t_repro.text_encoding``) does not import it.
"""

from __future__ import annotations

import collections
import re
import sys
import unicodedata

PAD, EOS = "<pad>", "<EOS>"
RESERVED = [PAD, EOS]

_ALNUM = None


def _alnum_set() -> set:
    global _ALNUM
    if _ALNUM is None:
        _ALNUM = {
            chr(i) for i in range(sys.maxunicode) if unicodedata.category(chr(i))[0] in ("L", "N")
        }
    return _ALNUM


def tok_encode(text: str) -> list[str]:
    if not text:
        return []
    alnum = _alnum_set()
    flags = [ch in alnum for ch in text]
    out = []
    begin = 0
    for i in range(1, len(text)):
        if flags[i] != flags[i - 1]:
            piece = text[begin:i]
            if piece != " " or begin == 0:
                out.append(piece)
            begin = i
    out.append(text[begin:])
    return out


def tok_decode(tokens: list[str]) -> str:
    alnum = _alnum_set()
    starts = [t[0] in alnum for t in tokens]
    s = ""
    for i, t in enumerate(tokens):
        if i > 0 and starts[i - 1] and starts[i]:
            s += " "
        s += t
    return s


_ESCAPES = set("\\_u;0123456789")
_UNESC = re.compile(r"\\u|\\\\|\\([0-9]+);")


def escape(token: str, alphabet) -> str:
    token = token.replace("\\", "\\\\").replace("_", "\\u")
    chars = []
    for ch in token:
        if ch in alphabet and ch != "\n":
            chars.append(ch)
        else:
            chars.append(f"\\{ord(ch)};")
    return "".join(chars) + "_"


def unescape(escaped: str) -> str:
    def repl(m):
        if m.group(1) is None:
            return "_" if m.group(0) == "\\u" else "\\"
        try:
            return chr(int(m.group(1)))
        except (ValueError, OverflowError):
            return "\u3013"

    if escaped.endswith("_"):
        escaped = escaped[:-1]
    return _UNESC.sub(repl, escaped)


class ReferenceSubwordEncoder:
    """T2T's SubwordTextEncoder algorithm, unoptimised."""

    CACHE_SIZE = 2**20

    def __init__(self, filename: str | None = None):
        self.alphabet: set = set()
        if filename is not None:
            with open(filename, encoding="utf-8", newline="\n") as f:
                strings = []
                for line in f:
                    s = line.rstrip()
                    if (s.startswith("'") and s.endswith("'")) or (
                        s.startswith('"') and s.endswith('"')
                    ):
                        s = s[1:-1]
                    strings.append(s)
            self._set_subtokens(strings)
            self._set_alphabet(strings)

    # -- vocabulary state -------------------------------------------------------------
    def _set_subtokens(self, strings, reserved=None):
        reserved = reserved or []
        self.all_subtokens = list(reserved) + list(strings)
        self.max_len = max(len(s) for s in strings)
        self.to_id = {}
        for i, s in enumerate(strings):
            if s:
                self.to_id[s] = i + len(reserved)
        self.cache = [(None, None)] * self.CACHE_SIZE

    def _set_alphabet(self, tokens):
        self.alphabet = set()
        for t in tokens:
            for ch in t:
                self.alphabet.add(ch)
        self.alphabet |= _ESCAPES

    @property
    def vocab_size(self) -> int:
        return len(self.all_subtokens)

    # -- encoding ---------------------------------------------------------------------
    def segment(self, escaped: str) -> list[str]:
        pieces = []
        pos = 0
        n = len(escaped)
        while pos < n:
            for end in range(min(n, pos + self.max_len), pos, -1):
                cand = escaped[pos:end]
                if cand in self.to_id:
                    pieces.append(cand)
                    pos = end
                    break
            else:
                raise AssertionError("Token substring not found in subtoken vocabulary.")
        return pieces

    def token_ids(self, token: str) -> list[int]:
        slot = hash(token) % self.CACHE_SIZE
        key, value = self.cache[slot]
        if key == token:
            return value
        value = [self.to_id[p] for p in self.segment(escape(token, self.alphabet))]
        self.cache[slot] = (token, value)
        return value

    def encode(self, text: str) -> list[int]:
        ids = []
        for tok in tok_encode(text):
            ids.extend(self.token_ids(tok))
        return ids

    def decode_list(self, ids) -> list[str]:
        return [self.all_subtokens[i] if 0 <= i < self.vocab_size else "" for i in ids]

    def decode(self, ids, strip_extraneous: bool = False) -> str:
        ids = list(ids)
        if strip_extraneous:
            while ids and ids[-1] in (0, 1):
                ids.pop()
        joined = "".join(self.decode_list(ids))
        tokens = []
        for piece in joined.split("_"):
            if piece:
                t = unescape(piece + "_")
                if t:
                    tokens.append(t)
        return tok_decode(tokens)

    # -- building ---------------------------------------------------------------------
    def build_from_token_counts(
        self,
        token_counts,
        min_count,
        num_iterations=4,
        reserved_tokens=None,
        max_subtoken_length=None,
    ):
        if reserved_tokens is None:
            reserved_tokens = RESERVED
        else:
            for a, b in zip(RESERVED, reserved_tokens, strict=False):
                if a != b:
                    raise ValueError("RESERVED_TOKENS must be a prefix of reserved_tokens.")
        self._set_alphabet(list(token_counts.keys()) + list(reserved_tokens))
        self._set_subtokens(list(self.alphabet), reserved=reserved_tokens)
        if min_count < 1:
            min_count = 1
        for _ in range(num_iterations):
            counts = collections.defaultdict(int)
            for token, c in token_counts.items():
                esc = escape(token, self.alphabet)
                start = 0
                for piece in self.segment(esc):
                    stop = len(esc) + 1
                    if max_subtoken_length is not None:
                        stop = min(stop, start + max_subtoken_length)
                    for end in range(start + 1, stop):
                        counts[esc[start:end]] += c
                    start += len(piece)
            by_len = []
            for s, c in counts.items():
                if c >= min_count:
                    while len(by_len) <= len(s):
                        by_len.append(set())
                    by_len[len(s)].add(s)
            chosen = []
            for n in range(len(by_len) - 1, 0, -1):
                for s in by_len[n]:
                    c = counts[s]
                    if c >= min_count:
                        if s not in self.alphabet:
                            chosen.append((c, s))
                        for k in range(1, n):
                            counts[s[:k]] -= c
            chosen.extend((counts.get(a, 0), a) for a in self.alphabet)
            chosen.sort(reverse=True)
            strings = [s for _, s in chosen]
            if reserved_tokens:
                strings = [escape(t, self.alphabet) for t in reserved_tokens] + strings
            self._set_subtokens(strings)

    @classmethod
    def build_to_target_size(
        cls,
        target_size,
        token_counts,
        min_val=1,
        max_val=1000,
        num_iterations=4,
        reserved_tokens=None,
        max_subtoken_length=None,
    ):
        if min_val > max_val:
            raise ValueError("min_val > max_val")
        if target_size < 1:
            raise ValueError("target_size must be positive")
        if reserved_tokens is None:
            reserved_tokens = RESERVED

        def bisect(lo, hi):
            present = (lo + hi) // 2
            enc = cls()
            enc.build_from_token_counts(
                token_counts,
                present,
                num_iterations,
                reserved_tokens=reserved_tokens,
                max_subtoken_length=max_subtoken_length,
            )
            if abs(enc.vocab_size - target_size) * 100 < target_size or lo >= hi or present < 2:
                return enc
            if enc.vocab_size > target_size:
                other = bisect(present + 1, hi)
            else:
                other = bisect(lo, present - 1)
            if abs(other.vocab_size - target_size) < abs(enc.vocab_size - target_size):
                return other
            return enc

        return bisect(min_val, max_val)

    def store_lines(self) -> list[str]:
        return ["'" + s + "'" for s in self.all_subtokens]
