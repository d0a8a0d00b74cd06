"""T2T's SubwordTextEncoder, id-for-id compatible with
``tensor2tensor.data_generators.text_encoder.SubwordTextEncoder``.

* Vocabulary files are T2T's ``.subwords`` files: one subtoken per line in single quotes.
  Ids 0 and 1 are the reserved ``<pad>`` and ``<EOS>``, stored either as ``'<pad>'`` /
  ``'<EOS>'`` (older files) or ``'<pad>_'`` / ``'<EOS>_'`` (what modern T2T and
  :meth:`SubwordTextEncoder.store_to_file` write); both load, by position.
* Encoding: :mod:`t2t_repro.text_encoding.tokenizer` splits the text into tokens; each token is
  escaped (``\\`` -> ``\\\\``, ``_`` -> ``\\u``, a character outside the vocabulary's
  alphabet or a newline -> ``\\<decimal code point>;``, then ``_`` appended) and segmented
  greedily, longest vocabulary prefix first.
* Decoding concatenates the subtoken strings, splits at ``_``, unescapes each piece and
  joins the tokens with :func:`t2t_repro.text_encoding.tokenizer.decode`.

Speed: encoding runs compiled (:mod:`t2t_repro.text_encoding.subword_kernel`): a whole batch of
texts is tokenized, escaped and segmented in one pass over its code points, with the vocabulary as a
trie and a per-batch token cache. The ids are those of T2T's algorithm (tests compare them with
``tests/reference_subword.py``). The vocabulary builder lives in
:mod:`t2t_repro.text_encoding.subword_builder`.

Vocabulary files are written and read as T2T writes and reads them, quirks included: a
subtoken with a newline in it (``'\\n'``, from texts that keep their line ends) is written
over two lines and read back as T2T reads it, one subtoken a line, so the ids of every
record are T2T's. A file written without quotes (T2T's ``store_to_file(filename,
add_single_quotes=False)``) loads as T2T loads it. Deliberate differences from T2T, all on
inputs T2T mishandles: a quoted file (its first line quoted, as T2T writes by default) with a
line T2T's ``store_to_file`` cannot have written there (an empty line between subtokens, a
quote never closed as in a truncated file, or closed but never opened) is an error (T2T would
silently shift ids); ``build_from_token_counts`` needs integer counts and
``num_iterations >= 1``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.errors import DataError
from t2t_repro.text_encoding import tokenizer
from t2t_repro.text_encoding.escaping import ESCAPE_CHARS, escape_token, unescape_token
from t2t_repro.text_encoding.reserved_tokens import NUM_RESERVED_TOKENS
from t2t_repro.text_encoding.subword_builder import SubwordBuilder

if TYPE_CHECKING:  # at run time imported with the first vocabulary: it loads numba (~0.1 s)
    from t2t_repro.text_encoding.compiled_vocabulary import CompiledVocabulary


class VocabFileError(DataError, ValueError):
    """A vocabulary file that cannot be read as a T2T ``.subwords`` file (a user error: the
    tools report it in one line)."""


class VocabFileNotFoundError(VocabFileError, FileNotFoundError):
    """A missing vocabulary file: a ``ValueError`` as T2T's ("File ... not found",
    ``SubwordTextEncoder._load_from_file``), and a ``FileNotFoundError`` as the OS's."""


def decode_utf8_dropping_errors(s: bytes | bytearray) -> str:
    """UTF-8 bytes as text, bytes that are not UTF-8 dropped: what T2T's encoders do with the
    bytes they encode or count (``text_encoder.py``, ``native_to_unicode``)."""
    return bytes(s).decode("utf-8", "ignore")


def _to_text(s) -> str:
    return decode_utf8_dropping_errors(s) if isinstance(s, (bytes, bytearray)) else s


_EXPECTED = "(expected one quoted subtoken per line, e.g. 'the_')"


def read_vocab_lines(path: str) -> list[str]:
    """The lines of a vocabulary file as T2T's ``tf.gfile`` gives them: split at ``\\n``, every
    ``\\r`` dropped; a line that is not UTF-8 is refused in one line naming it."""
    path = os.fspath(path)
    try:
        with fileio.open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise VocabFileNotFoundError(f"subword vocabulary file not found: {path}") from None
    except IsADirectoryError:
        raise VocabFileError(f"{path}: is a directory, not a subword vocabulary file") from None
    raw_lines = data.replace(b"\r", b"").split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the newline that ends the last line
    lines = []
    for lineno, raw in enumerate(raw_lines, start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise VocabFileError(f"{path}, line {lineno}: not valid UTF-8 ({e})") from None
    return lines


def subtoken_strings_of_lines(path: str, lines: Sequence[str]) -> list[str]:
    """The subtokens of a vocabulary file's lines, read as T2T reads them
    (``text_encoder.py``, ``SubwordTextEncoder._load_from_file_object``): each line
    right-stripped, one pair of surrounding quotes (both ``'`` or both ``"``) removed, so in
    an unquoted file the lines of the space and the apostrophe subtokens read as empty
    subtokens (each keeps its id; nothing encodes to it). A quoted file (first line quoted,
    T2T's default) is also checked line by line (``_check_line``): what T2T cannot have
    written there is refused in one line."""
    first = lines[0].rstrip() if lines else ""
    quoted = len(first) >= 2 and first[0] in "'\"" and first[-1] == first[0]
    strings: list[str] = []
    open_at = 0  # the line where a subtoken spanning lines began (0: none is open)
    for lineno, line in enumerate(lines, start=1):
        s = line.rstrip()
        if quoted:
            open_at = _check_line(path, lineno, line, s, open_at)
        if s[:1] in ("'", '"') and s[-1:] == s[:1]:
            s = s[1:-1]
        strings.append(s)
    if open_at:
        raise VocabFileError(
            f"{path}, line {open_at}: unbalanced quotes: the quote opened there is never "
            "closed (a truncated file? expected one quoted subtoken per line, e.g. 'the_')"
        )
    if not strings:
        raise VocabFileError(f"{path}: empty subword vocabulary file")
    return strings


def _check_line(path: str, lineno: int, line: str, s: str, open_at: int) -> int:
    """Refuses a line T2T's ``store_to_file`` cannot have written there; returns the line where
    a subtoken with a newline, still open after this line, began (0: none is open). Inside one,
    any line may come, and one ending in a quote closes it (``'a`` then ``b'`` is ``a\\nb``)."""
    if open_at:
        return 0 if s.endswith("'") else open_at
    if not s:
        raise VocabFileError(f"{path}, line {lineno}: empty line {_EXPECTED}")
    if s[0] == "'" and not (len(s) >= 2 and s[-1] == "'"):
        return lineno  # a subtoken with a newline starts here (or the file is truncated)
    balanced = s[0] not in "'\"" or (len(s) >= 2 and s[-1] == s[0])
    if not balanced or (s[0] not in "'\"" and s[-1] in "'\""):
        raise VocabFileError(f"{path}, line {lineno}: unbalanced quotes in {line!r} {_EXPECTED}")
    return 0


class SubwordTextEncoder:
    """Invertible subword encoder with T2T's vocabulary format, ids and algorithms."""

    graph_kind = "subwords"  # in the graph: GraphSubwordEncoder (serving/exporter.py)

    def __init__(self, filename: str | None = None):
        self.filename = filename
        self._alphabet: frozenset = frozenset()
        self._all_subtoken_strings: list[str] = []
        self._num_reserved_ids = NUM_RESERVED_TOKENS
        self._compiled: CompiledVocabulary | None = None
        if filename is not None:
            self.load_from_file(filename)

    # -- vocabulary state --------------------------------------------------------------
    def _init_subtokens(self, subtoken_strings: list[str], alphabet=None) -> None:
        if not subtoken_strings:
            raise ValueError("a subword vocabulary needs at least one subtoken")
        strings = list(subtoken_strings)
        if alphabet is None:
            chars = set()
            for s in strings:
                chars.update(s)
            alphabet = chars | ESCAPE_CHARS
        alphabet = frozenset(alphabet)
        from t2t_repro.text_encoding.compiled_vocabulary import CompiledVocabulary

        compiled = CompiledVocabulary(strings, alphabet)  # first: if it fails, nothing changed
        self._all_subtoken_strings = strings
        self._alphabet = alphabet
        self._compiled = compiled

    @property
    def vocab_size(self) -> int:
        return len(self._all_subtoken_strings)

    @property
    def all_subtoken_strings(self) -> tuple[str, ...]:
        return tuple(self._all_subtoken_strings)

    def dump(self) -> None:
        """T2T's debugging print of the vocabulary: ``id : 'subtoken'`` by id, a repeated
        subtoken at its last id, an empty one left out (``SubwordTextEncoder.dump`` prints
        its ``_subtoken_string_to_id``)."""
        last = {s: i for i, s in enumerate(self._all_subtoken_strings) if s}
        print(", ".join(f"{i} : '{s}'" for s, i in sorted(last.items(), key=lambda x: x[1])))

    @property
    def alphabet(self) -> frozenset:
        return self._alphabet

    @property
    def num_reserved_ids(self) -> int:
        return self._num_reserved_ids

    # -- files -----------------------------------------------------------------------
    def load_from_file(self, path: str) -> None:
        """Read a T2T ``.subwords`` file as T2T reads it
        (``data_generators/text_encoder.py``, ``SubwordTextEncoder._load_from_file_object``):
        :func:`subtoken_strings_of_lines` of :func:`read_vocab_lines`. A subtoken T2T wrote
        with a newline in it (``store_to_file`` writes ``"'" + s + "'\\n"``) spans lines and
        reads back, as in T2T, as one subtoken a line (``'\\n'`` as two empty ones; a ``\\r``
        in it is dropped, as ``tf.gfile``'s lines drop it)."""
        path = os.fspath(path)
        self._init_subtokens(subtoken_strings_of_lines(path, read_vocab_lines(path)))
        self.filename = path

    def store_to_file(self, path: str, add_single_quotes: bool = True) -> None:
        """Write the vocabulary as T2T writes it (``"'" + subtoken + "'\\n"`` a subtoken, a
        newline inside one included: ``load_from_file`` reads it back as T2T does),
        atomically: a temp file beside ``path``, then a rename."""
        path = os.fspath(path)
        if add_single_quotes:
            text = "".join(f"'{s}'\n" for s in self._all_subtoken_strings)
        else:
            text = "".join(f"{s}\n" for s in self._all_subtoken_strings)
        try:
            write_text_atomically(path, text, newline="\n")
        except OSError as e:
            raise OSError(
                e.errno, f"cannot write subword vocabulary to {path}: {e.strerror or e}", path
            ) from e

    # -- encoding ----------------------------------------------------------------------
    def _check_ready(self) -> None:
        if self._compiled is None:
            raise ValueError("SubwordTextEncoder has no vocabulary: load or build one first")

    def _encode_texts(self, texts: Sequence[str], tokenize: bool) -> list[list[int]]:
        self._check_ready()
        try:
            ids, failed = self._compiled.encode(texts, tokenize)
        except TypeError:  # bytes among the texts (or something that is no text at all)
            texts = [_to_text(t) for t in texts]
            bad = next((t for t in texts if not isinstance(t, str)), None)
            if bad is not None:
                raise ValueError(
                    f"expected str or UTF-8 bytes to encode, got {type(bad)}"
                ) from None
            ids, failed = self._compiled.encode(texts, tokenize)
        if failed >= 0:
            raise self._unencodable(texts[failed], tokenize)
        return ids

    def _unencodable(self, text: str, tokenize: bool) -> ValueError:
        """The error for a text whose escaped form reaches a position where no subtoken
        starts (only possible with a vocabulary lacking a single-character subtoken for a
        character of its alphabet, which T2T's vocabularies never do)."""
        tokens = tokenizer.encode(text) if tokenize else [text]
        subtokens = set(self._all_subtoken_strings)
        missing = sorted(
            {c for tok in tokens for c in escape_token(tok, self._alphabet) if c not in subtokens}
        )
        return ValueError(
            f"cannot encode {text[:80]!r}: its greedy segmentation reaches a position where no "
            "subtoken of this vocabulary starts; characters of its escaped tokens without a "
            f"single-character subtoken: {missing[:10]!r} (a T2T vocabulary has one for every "
            "character of its alphabet; rebuild the vocabulary or add them)"
        )

    def encode(self, text: str) -> list[int]:
        """Subtoken ids of ``text`` (no EOS appended)."""
        return self._encode_texts((text,), tokenize=True)[0]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        """``[encode(t) for t in texts]``, in one compiled pass (much faster per text)."""
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        return self._encode_texts(texts, tokenize=True)

    def encode_without_tokenizing(self, token_text: str) -> list[int]:
        """Ids of ``token_text`` treated as one token (T2T's method of that name)."""
        return self._encode_texts((token_text,), tokenize=False)[0]

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
    def build_from_token_counts(
        self,
        token_counts: Mapping[str, int],
        min_count: int,
        num_iterations: int = 4,
        reserved_tokens: Sequence[str] | None = None,
        max_subtoken_length: int | None = None,
    ) -> None:
        """T2T's vocabulary construction for one ``min_count`` (T2T's
        ``SubwordTextEncoder.build_from_token_counts``)."""
        builder = SubwordBuilder(token_counts, reserved_tokens, max_subtoken_length)
        self._init_subtokens(builder.build(min_count, num_iterations), builder.alphabet)

    @classmethod
    def build_to_target_size(
        cls,
        target_size: int,
        token_counts: Mapping[str, int],
        min_val: int = 1,
        max_val: int = 1000,
        max_subtoken_length: int | None = None,
        reserved_tokens: Sequence[str] | None = None,
        num_iterations: int = 4,
    ) -> SubwordTextEncoder:
        """T2T's recursive bisection over ``min_count`` for a vocabulary near
        ``target_size`` (:meth:`SubwordBuilder.build_to_target_size`); T2T's argument order."""
        if min_val > max_val:
            raise ValueError(
                "Lower bound for the minimum token count is greater than the upper bound."
            )
        if target_size < 1:
            raise ValueError("Target size must be positive.")
        builder = SubwordBuilder(token_counts, reserved_tokens, max_subtoken_length)
        encoder = cls()
        encoder._init_subtokens(
            builder.build_to_target_size(target_size, min_val, max_val, num_iterations),
            builder.alphabet,
        )
        return encoder

    @classmethod
    def build_from_generator(
        cls,
        generator: Iterable[str],
        target_size: int,
        max_subtoken_length: int | None = None,
        reserved_tokens: Sequence[str] | None = None,
    ) -> SubwordTextEncoder:
        """Count tokens of every text ``generator`` yields, then
        :meth:`build_to_target_size` with ``min_val=1, max_val=1000``."""
        counts = tokenizer.count_tokens(_to_text(item) for item in generator)
        return cls.build_to_target_size(
            target_size,
            counts,
            1,
            1000,
            max_subtoken_length=max_subtoken_length,
            reserved_tokens=reserved_tokens,
        )
