"""T2T's SubwordTextEncoder (digest §4.4, §6), id-for-id compatible with
``tensor2tensor.data_generators.text_encoder.SubwordTextEncoder``.

* Vocabulary files are T2T's ``.subwords`` files: one subtoken per line in single quotes.
  Ids 0 and 1 are the reserved ``<pad>`` and ``<EOS>``, stored either as ``'<pad>'`` /
  ``'<EOS>'`` (older files) or ``'<pad>_'`` / ``'<EOS>_'`` (what modern T2T and
  :meth:`SubwordTextEncoder.store_to_file` write); both load, by position.
* Encoding: :mod:`t2t_repro.data.tokenizer` splits the text into tokens; each token is
  escaped (``\\`` -> ``\\\\``, ``_`` -> ``\\u``, a character outside the vocabulary's
  alphabet or a newline -> ``\\<decimal code point>;``, then ``_`` appended) and segmented
  greedily, longest vocabulary prefix first.
* Decoding concatenates the subtoken strings, splits at ``_``, unescapes each piece and
  joins the tokens with :func:`t2t_repro.data.tokenizer.decode`.

Speed: ``encode_batch`` splits each text at spaces and looks the pieces up in caches of
"chunk -> ids" (each distinct chunk is tokenized, escaped and segmented once; see
``_before_space``), so a typical text costs one ``str.split`` and a few C-level list
operations; texts with leading, trailing or double spaces, or a space before punctuation,
take the general path (regex tokenizer + per-token cache). The output is the same either
way. The vocabulary builder lives in :mod:`t2t_repro.data.subword_builder`.

Deliberate differences from T2T, all on inputs T2T mishandles: a vocabulary file with an
empty line or unbalanced quotes is an error (T2T would silently shift ids); ``store_to_file``
refuses a subtoken containing a newline (T2T would write a file it cannot read back);
``build_from_token_counts`` needs integer counts and ``num_iterations >= 1``.
"""

from __future__ import annotations

import gc
import os
import re
import uuid
from itertools import chain, islice
from typing import Iterable, Mapping, Sequence

from t2t_repro.data import tokenizer
from t2t_repro.data.tokenizer import _runs

PAD = "<pad>"
EOS = "<EOS>"
RESERVED_TOKENS = [PAD, EOS]
NUM_RESERVED_TOKENS = len(RESERVED_TOKENS)
PAD_ID = RESERVED_TOKENS.index(PAD)  # 0
EOS_ID = RESERVED_TOKENS.index(EOS)  # 1

# The alphabet always contains the characters escapes are written with.
ESCAPE_CHARS = frozenset("\\_u;0123456789")
_UNESCAPE_RE = re.compile(r"\\u|\\\\|\\([0-9]+);")
_UNDEFINED_CHAR = "\u3013"

# T2T keeps one 2**20-slot token cache; ours are dicts, each cleared when it reaches this size.
_CACHE_LIMIT = 2 ** 18


class VocabFileError(ValueError):
    """A vocabulary file that cannot be read as a T2T ``.subwords`` file."""


def _to_text(s) -> str:
    return s.decode("utf-8") if isinstance(s, (bytes, bytearray)) else s


def escape_token(token: str, alphabet) -> str:
    """T2T's ``_escape_token``: escape ``\\`` and ``_``, replace characters outside
    ``alphabet`` (and newlines) by ``\\<decimal>;`` and append the ``_`` end marker."""
    if not isinstance(token, str):
        raise ValueError(f"Expected string type for token, got {type(token)}")
    token = token.replace("\\", "\\\\").replace("_", "\\u")
    if "\n" in token or not alphabet.issuperset(token):
        token = "".join(c if c in alphabet and c != "\n" else f"\\{ord(c)};" for c in token)
    return token + "_"


def _unescape_match(m: re.Match) -> str:
    code = m.group(1)
    if code is None:
        return "_" if m.group(0) == "\\u" else "\\"
    try:
        return chr(int(code))
    except (ValueError, OverflowError):
        return _UNDEFINED_CHAR


def unescape_token(escaped_token: str) -> str:
    """T2T's ``_unescape_token`` (invalid code points become U+3013)."""
    if escaped_token.endswith("_"):
        escaped_token = escaped_token[:-1]
    if "\\" not in escaped_token:
        return escaped_token
    return _UNESCAPE_RE.sub(_unescape_match, escaped_token)


class _Cache(dict):
    """A dict whose misses are computed by ``fill`` (via ``__missing__``, so
    ``map(cache.__getitem__, keys)`` stays in C for hits); cleared when it gets large."""

    __slots__ = ("_fill",)

    def __init__(self, fill):
        super().__init__()
        self._fill = fill

    def __missing__(self, key):
        value = self._fill(key)
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[key] = value
        return value


class SubwordTextEncoder:
    """Invertible subword encoder with T2T's vocabulary format, ids and algorithms."""

    def __init__(self, filename: str | None = None):
        self.filename = filename
        self._alphabet: frozenset = frozenset()
        self._all_subtoken_strings: list[str] = []
        self._subtoken_string_to_id: dict[str, int] = {}
        self._max_subtoken_len = 0
        self._num_reserved_ids = NUM_RESERVED_TOKENS
        self._reset_cache()
        if filename is not None:
            self.load_from_file(filename)

    # -- vocabulary state --------------------------------------------------------------
    def _init_subtokens(self, subtoken_strings: list[str], alphabet=None) -> None:
        if not subtoken_strings:
            raise ValueError("a subword vocabulary needs at least one subtoken")
        self._all_subtoken_strings = list(subtoken_strings)
        self._max_subtoken_len = max(len(s) for s in subtoken_strings)
        # As in T2T: every non-empty string is matchable; a duplicate keeps the last id.
        self._subtoken_string_to_id = {s: i for i, s in enumerate(subtoken_strings) if s}
        if alphabet is None:
            chars = set()
            for s in subtoken_strings:
                chars.update(s)
            alphabet = chars | ESCAPE_CHARS
        self._alphabet = frozenset(alphabet)
        self._reset_cache()

    def _reset_cache(self) -> None:
        # token -> ids.
        self._tokens = _Cache(self._token_to_ids)
        # Chunk caches (see ``encode_batch``). ``_mid``: chunk followed by a space and
        # preceded by a space; ``_last``: chunk ending a text, preceded by a space. Both hold
        # None for a chunk that is empty or starts with a non-alphanumeric character.
        # ``_first``: chunk followed by a space at the start of a text (None if empty);
        # ``_whole``: a text without spaces.
        self._mid = _Cache(self._fill_mid)
        self._last = _Cache(self._fill_last)
        self._first = _Cache(self._fill_first)
        self._whole = _Cache(self._fill_whole)

    @property
    def vocab_size(self) -> int:
        return len(self._all_subtoken_strings)

    @property
    def all_subtoken_strings(self) -> tuple[str, ...]:
        return tuple(self._all_subtoken_strings)

    @property
    def alphabet(self) -> frozenset:
        return self._alphabet

    @property
    def num_reserved_ids(self) -> int:
        return self._num_reserved_ids

    # -- files -----------------------------------------------------------------------
    def load_from_file(self, path: str) -> None:
        """Read a T2T ``.subwords`` file (one subtoken per line, single- or double-quoted
        or bare, as T2T accepts)."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise FileNotFoundError(f"subword vocabulary file not found: {path}") from None
        except IsADirectoryError:
            raise VocabFileError(f"{path}: is a directory, not a subword vocabulary file") \
                from None
        raw_lines = data.split(b"\n")
        if raw_lines and raw_lines[-1] == b"":
            raw_lines.pop()  # the newline that ends the last line
        strings: list[str] = []
        for lineno, raw in enumerate(raw_lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise VocabFileError(f"{path}, line {lineno}: not valid UTF-8 ({e})") from None
            s = line.rstrip()
            if not s:
                raise VocabFileError(f"{path}, line {lineno}: empty line (expected one quoted "
                                     "subtoken per line, e.g. 'the_')")
            if s[0] in "'\"":
                if len(s) < 2 or s[-1] != s[0]:
                    raise VocabFileError(f"{path}, line {lineno}: unbalanced quotes in {line!r} "
                                         "(expected one quoted subtoken per line, e.g. 'the_')")
                s = s[1:-1]
            elif s[-1] in "'\"":
                raise VocabFileError(f"{path}, line {lineno}: unbalanced quotes in {line!r} "
                                     "(expected one quoted subtoken per line, e.g. 'the_')")
            strings.append(s)
        if not strings:
            raise VocabFileError(f"{path}: empty subword vocabulary file")
        self._init_subtokens(strings)
        self.filename = path

    def store_to_file(self, path: str, add_single_quotes: bool = True) -> None:
        """Write the vocabulary (T2T format) atomically: a temp file beside ``path``,
        then a rename."""
        path = os.fspath(path)
        for i, s in enumerate(self._all_subtoken_strings):
            if "\n" in s:
                raise ValueError(
                    f"cannot store subtoken {i} ({s!r}) to {path}: a newline cannot be "
                    "represented in the one-subtoken-per-line .subwords format (T2T would "
                    "write a corrupt file); build the vocabulary from text without newlines")
        if add_single_quotes:
            text = "".join(f"'{s}'\n" for s in self._all_subtoken_strings)
        else:
            text = "".join(f"{s}\n" for s in self._all_subtoken_strings)
        directory = os.path.dirname(os.path.abspath(path))
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as e:
            raise OSError(e.errno, f"cannot write subword vocabulary to {path}: "
                                   f"{e.strerror or e}", path) from e

    # -- encoding ----------------------------------------------------------------------
    def _token_to_ids(self, token: str) -> tuple[int, ...]:
        """Greedy longest-prefix segmentation of the escaped token (T2T's algorithm)."""
        escaped = escape_token(token, self._alphabet)
        to_id = self._subtoken_string_to_id
        max_len = self._max_subtoken_len
        n = len(escaped)
        if n <= max_len:
            i = to_id.get(escaped)
            if i is not None:
                return (i,)
        ids = []
        pos = 0
        while pos < n:
            end = min(n, pos + max_len)
            while end > pos:
                i = to_id.get(escaped[pos:end])
                if i is not None:
                    ids.append(i)
                    pos = end
                    break
                end -= 1
            else:
                raise ValueError(
                    f"cannot encode {escaped[pos:]!r}: no prefix of it is a subtoken of this "
                    "vocabulary (the vocabulary lacks a single-character subtoken for a "
                    "character of its own alphabet)")
        return tuple(ids)

    def _ids_of_tokens(self, tokens: list[str]) -> tuple[int, ...]:
        return tuple(chain.from_iterable(map(self._tokens.__getitem__, tokens)))

    # A chunk is a maximal piece of a text without spaces. When a text has no leading,
    # trailing or double space and every chunk after the first starts with an
    # alphanumeric character, each of its spaces is a run of its own or ends a
    # non-alphanumeric run, and the next run starts after it; so the tokens of
    # "c0 c1 ... cn" are those of "c0 ", "c1 ", ..., "cn" in order, where a trailing
    # single-space run is dropped (it lies inside the text).
    def _before_space(self, chunk: str) -> tuple[int, ...]:
        if chunk.isalnum():  # str.isalnum() is "every character L* or N*"
            # A whole-word subtoken is the longest possible prefix, and its characters
            # are in the alphabet, so escaping is just the "_".
            i = self._subtoken_string_to_id.get(chunk + "_")
            if i is not None:
                return (i,)
            return self._tokens[chunk]
        toks = _runs(chunk + " ")
        if toks[-1] == " ":
            toks.pop()
        return self._ids_of_tokens(toks)

    def _at_end(self, chunk: str) -> tuple[int, ...]:
        if chunk.isalnum():
            i = self._subtoken_string_to_id.get(chunk + "_")
            if i is not None:
                return (i,)
            return self._tokens[chunk]
        return self._ids_of_tokens(_runs(chunk))

    def _fill_first(self, chunk: str):
        return self._before_space(chunk) if chunk else None

    def _fill_mid(self, chunk: str):
        if not chunk or not chunk[0].isalnum():
            return None
        return self._before_space(chunk)

    def _fill_whole(self, chunk: str) -> tuple[int, ...]:
        return self._at_end(chunk)

    def _fill_last(self, chunk: str):
        if not chunk or not chunk[0].isalnum():
            return None
        return self._at_end(chunk)

    def _encode_general(self, text: str) -> list[int]:
        return list(self._ids_of_tokens(tokenizer.encode(text)))

    def _encode_other(self, text: str) -> list[int]:
        """Texts the one-line path of ``encode_batch`` does not take."""
        chunks = text.split(" ")
        last = chunks.pop()
        if not chunks:
            return list(self._whole[last])
        first = self._first[chunks[0]]
        rest = list(map(self._mid.__getitem__, islice(chunks, 1, None)))
        tail = self._last[last]
        if first is None or tail is None or None in rest:
            return self._encode_general(text)
        ids = list(first)
        ids.extend(chain.from_iterable(rest))
        ids.extend(tail)
        return ids

    def _check_ready(self) -> None:
        if not self._all_subtoken_strings:
            raise ValueError("SubwordTextEncoder has no vocabulary: load or build one first")

    def encode(self, text: str) -> list[int]:
        """Subtoken ids of ``text`` (no EOS appended)."""
        return self.encode_batch((text,))[0]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        """``[encode(t) for t in texts]``, fast.

        Each text is split at spaces into chunks whose ids are cached (``_reset_cache``):
        for the usual text (every chunk after the first starts with a letter or digit, no
        leading, trailing or double spaces) that is one ``str.split`` and a few C-level
        list operations; any other text goes through the same token cache via
        ``_encode_other``.
        """
        self._check_ready()
        mid_get = self._mid.__getitem__
        last_get = self._last.__getitem__
        from_iterable = chain.from_iterable
        other = self._encode_other
        out: list[list[int]] = []
        append = out.append
        gc_was_enabled = gc.isenabled()
        gc.disable()  # many small containers, nothing cyclic: skip collector passes
        try:
            for text in texts:
                if not isinstance(text, str):
                    text = _to_text(text)
                chunks = text.split(" ")
                last = chunks.pop()
                try:
                    ids = list(from_iterable(map(mid_get, chunks)))
                    ids.extend(last_get(last))
                except TypeError:  # a None chunk value
                    ids = other(text)
                append(ids)
        finally:
            if gc_was_enabled:
                gc.enable()
        return out

    def encode_without_tokenizing(self, token_text: str) -> list[int]:
        """Ids of ``token_text`` treated as one token (T2T's method of that name)."""
        return list(self._token_to_ids(_to_text(token_text)))

    # -- decoding ----------------------------------------------------------------------
    def decode_list(self, ids: Iterable[int]) -> list[str]:
        """The subtoken string of each id ("" for an id outside the vocabulary)."""
        strings = self._all_subtoken_strings
        n = len(strings)
        return [strings[i] if 0 <= i < n else "" for i in map(int, ids)]

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        """Text of ``ids``; with ``strip_extraneous`` trailing PAD/EOS ids are removed first
        (T2T's ``strip_ids``)."""
        ids = [int(i) for i in ids]
        if strip_extraneous:
            while ids and 0 <= ids[-1] < self._num_reserved_ids:
                ids.pop()
        tokens = []
        for piece in "".join(self.decode_list(ids)).split("_"):
            if piece:
                tok = unescape_token(piece)
                if tok:
                    tokens.append(tok)
        return tokenizer.decode(tokens)

    # -- building ----------------------------------------------------------------------
    def build_from_token_counts(self, token_counts: Mapping[str, int], min_count: int,
                                num_iterations: int = 4,
                                reserved_tokens: Sequence[str] | None = None,
                                max_subtoken_length: int | None = None) -> None:
        """T2T's vocabulary construction for one ``min_count`` (digest §6.4)."""
        from t2t_repro.data.subword_builder import SubwordBuilder

        builder = SubwordBuilder(token_counts, reserved_tokens, max_subtoken_length)
        self._init_subtokens(builder.build(min_count, num_iterations), builder.alphabet)

    @classmethod
    def build_to_target_size(cls, target_size: int, token_counts: Mapping[str, int],
                             min_val: int = 1, max_val: int = 1000, num_iterations: int = 4,
                             reserved_tokens: Sequence[str] | None = None,
                             max_subtoken_length: int | None = None) -> "SubwordTextEncoder":
        """T2T's recursive bisection over ``min_count`` for a vocabulary near
        ``target_size`` (:meth:`SubwordBuilder.build_to_target_size`)."""
        from t2t_repro.data.subword_builder import SubwordBuilder

        if min_val > max_val:
            raise ValueError("Lower bound for the minimum token count "
                             "is greater than the upper bound.")
        if target_size < 1:
            raise ValueError("Target size must be positive.")
        builder = SubwordBuilder(token_counts, reserved_tokens, max_subtoken_length)
        encoder = cls()
        encoder._init_subtokens(builder.build_to_target_size(target_size, min_val, max_val,
                                                             num_iterations), builder.alphabet)
        return encoder

    @classmethod
    def build_from_generator(cls, generator: Iterable[str], target_size: int,
                             max_subtoken_length: int | None = None,
                             reserved_tokens: Sequence[str] | None = None
                             ) -> "SubwordTextEncoder":
        """Count tokens of every text ``generator`` yields, then
        :meth:`build_to_target_size` with ``min_val=1, max_val=1000``."""
        counts = tokenizer.count_tokens(_to_text(item) for item in generator)
        return cls.build_to_target_size(target_size, counts, 1, 1000,
                                        max_subtoken_length=max_subtoken_length,
                                        reserved_tokens=reserved_tokens)
