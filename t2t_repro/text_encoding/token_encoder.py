"""One id per whitespace token: T2T's ``TokenTextEncoder`` (``data_generators/text_encoder.py``),
the one implementation behind this project's token vocabularies and a usr_dir's.

The parsing targets need it: the subword tokenizer splits ``/NP`` into ``" /"`` + ``NP`` and
merges punctuation tags with the following closer's slash (``" . /"``), so a label, closer or
POS tag was not one id, and a decoder could emit half a closer. Here every label, closer and tag
is exactly one id, which the tree-constrained search relies on.

T2T's rules, kept: the line number in the vocab file is the id; a vocabulary made from a list
starts with the reserved tokens (``<pad>`` 0, ``<EOS>`` 1), reserved tokens in the list are
dropped; an unknown token is encoded as ``replace_oov`` (an error without it); ``reverse``
reverses the ids; an id outside the vocabulary decodes as ``ID_<n>``. This project's own
vocabularies (the defaults here) also reserve ``<UNK>`` at id 2, encode unknown tokens as it,
and refuse a file T2T would read into a broken vocabulary (an empty token, one with a space, a
repeated token). ``t2t_compat/text_encoder.py``'s ``TokenTextEncoder`` is this class with T2T's
signature and defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.errors import DataError
from t2t_repro.text_encoding.text_encoder import VocabFileError

UNK = "<UNK>"
RESERVED = ("<pad>", "<EOS>", UNK)
UNK_ID = 2


class UnknownTokenError(DataError, KeyError):
    """A token that is not in the vocabulary (without ``replace_oov``): a ``KeyError`` as T2T's
    dict lookup raises (``TokenTextEncoder.encode``), reported in one line."""

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


class TokenTextEncoder:
    """Whitespace tokens <-> ids from a one-token-per-line vocab file or a list of tokens."""

    # Which in-graph decoder the SavedModel export uses (serving/exporter.py).
    graph_kind = "tokens"

    def __init__(
        self,
        filename: str | None = None,
        tokens: Sequence[str] = (),
        *,
        reverse: bool = False,
        replace_oov: str | None = UNK,
        reserved: Sequence[str] = RESERVED,
        strict: bool = True,
    ) -> None:
        """``strict``: this project's reading of its own files (see the module doc); off, the
        file is read as T2T reads it (each line stripped, nothing added)."""
        self._reverse = reverse
        self._replace_oov = replace_oov
        self._source = filename or "the token list"
        if filename:
            tokens = self._read(filename) if strict else self._read_like_t2t(filename)
        tokens = list(tokens)
        if not filename or strict:
            # T2T's list (_init_vocab_from_list) drops every reserved token it holds; this
            # project's own vocabularies start with them (a repeat later is refused below)
            if not strict or tuple(tokens[: len(reserved)]) != tuple(reserved):
                tokens = list(reserved) + [t for t in tokens if t not in reserved]
        if strict and len(set(tokens)) != len(tokens):
            raise VocabFileError(
                f"token vocabulary {filename or ''} repeats a token; rebuild it "
                "(delete the file and rerun t2t-datagen)."
            )
        self._tokens = tuple(tokens)
        self._ids = {t: i for i, t in enumerate(self._tokens)}  # a repeat: the last id, as T2T
        if reverse:  # the export's in-graph decoder does not reverse
            self.graph_kind = "reversed token"

    @staticmethod
    def _read(path: str) -> list[str]:
        with fileio.open(path, encoding="utf-8") as f:
            tokens = [line.rstrip("\n") for line in f]
        if not tokens or any(not t or " " in t for t in tokens):
            raise VocabFileError(
                f"{path}: not a token vocabulary (one non-empty token without "
                "spaces per line). Delete it and rerun t2t-datagen."
            )
        return tokens

    @staticmethod
    def _read_like_t2t(path: str) -> list[str]:
        if not fileio.isfile(path):
            raise DataError(
                f"token vocabulary {path} not found: VocabType.TOKEN needs your own vocabulary "
                "file there (one token a line; <pad> and <EOS> first)."
            )
        with fileio.open(path, "rb") as f:  # T2T's tf.gfile lines: split at \n, \r dropped
            lines = f.read().replace(b"\r", b"").decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()  # the newline that ends the last line, or an empty file
        return [line.strip() for line in lines]

    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    @property
    def tokens(self) -> tuple[str, ...]:
        return self._tokens

    def token_id(self, token: str) -> int:
        return self._ids.get(token, UNK_ID)

    def encode(self, text: str) -> list[int]:
        tokens = text.split()
        if self._replace_oov is not None:
            tokens = [t if t in self._ids else self._replace_oov for t in tokens]
        missing = [t for t in tokens if t not in self._ids]
        if missing:
            raise UnknownTokenError(
                f"token {missing[0]!r} is not in {self._source}: add it, or give the problem "
                "an oov_token that the vocabulary holds."
            )
        ids = [self._ids[t] for t in tokens]
        return ids[::-1] if self._reverse else ids

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def decode_list(self, ids: Iterable[int]) -> list[str]:
        ids = [int(i) for i in ids]
        n = len(self._tokens)
        return [
            self._tokens[i] if 0 <= i < n else f"ID_{i}"
            for i in (ids[::-1] if self._reverse else ids)
        ]

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        """The tokens joined by spaces; ``strip_extraneous`` drops trailing PAD and EOS ids
        (T2T's ``TokenTextEncoder`` ignores the flag: its decoder has cut at EOS already)."""
        ids = [int(i) for i in ids]
        if strip_extraneous:
            while ids and 0 <= ids[-1] < 2:
                ids.pop()
        return " ".join(self.decode_list(ids))

    def store_to_file(self, path: str) -> None:
        """One token a line, reserved ones included (T2T's format); atomic."""
        fileio.makedirs_for(path)
        write_text_atomically(path, "".join(t + "\n" for t in self._tokens))
