"""``tensor2tensor.data_generators.text_encoder`` for a T2T usr_dir: T2T's reserved tokens and
encoders (``text_encoder.py``). The subword and byte encoders are this project's T2T-exact
ones (``t2t_repro/text_encoding/``); ``TokenTextEncoder`` is T2T's own file format here (one
token a line, the line number is the id, no reserved ids added), which differs from the
project's word vocabularies (``text_encoding/token_encoder.py``: ``<UNK>`` at id 2).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import refusals
from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder
from t2t_repro.text_encoding.reserved_tokens import (
    EOS,
    EOS_ID,
    NUM_RESERVED_TOKENS,
    PAD,
    PAD_ID,
    RESERVED_TOKENS,
)
from t2t_repro.text_encoding.text_encoder import SubwordTextEncoder

__all__ = [
    "EOS",
    "EOS_ID",
    "NUM_RESERVED_TOKENS",
    "PAD",
    "PAD_ID",
    "RESERVED_TOKENS",
    "ByteTextEncoder",
    "SubwordTextEncoder",
    "TextEncoder",
    "TokenTextEncoder",
    "is_unicode",
    "native_to_unicode",
    "strip_ids",
    "to_unicode",
    "to_unicode_ignore_errors",
    "to_unicode_utf8",
    "unicode_to_native",
]


def native_to_unicode(s) -> str:
    return s.decode("utf-8") if isinstance(s, bytes) else s


def unicode_to_native(s: str) -> str:
    return s


def is_unicode(s) -> bool:
    return isinstance(s, str)


def to_unicode(s, ignore_errors: bool = False) -> str:
    """T2T's ``to_unicode``: text as it is, bytes decoded as UTF-8."""
    if is_unicode(s):
        return s
    return s.decode("utf-8", "ignore" if ignore_errors else "strict")


def to_unicode_ignore_errors(s) -> str:
    return to_unicode(s, ignore_errors=True)


def to_unicode_utf8(s) -> str:
    return s.decode("utf-8") if isinstance(s, bytes) else s


def strip_ids(ids: Iterable[int], ids_to_strip: Sequence[int]) -> list[int]:
    """``ids`` without the trailing ones in ``ids_to_strip``."""
    ids = list(ids)
    while ids and ids[-1] in ids_to_strip:
        ids.pop()
    return ids


class TextEncoder(abc.ABC):  # noqa: B024 (an ABC for register(): the project's encoders)
    """T2T's base class of encoders (``text_encoder.py``, ``TextEncoder``), for a usr_dir's own
    encoder: a subclass overrides ``encode``, ``decode`` (or ``decode_list``) and
    ``vocab_size``; datagen, the trainer and the decoder use only those. The defaults are
    T2T's: ids are the integers of the text, offset by the reserved ids. The project's
    encoders below count as subclasses (``isinstance`` holds, as in T2T)."""

    # The exporter builds no in-graph encoder for a user's encoder: it says so in one line.
    graph_kind = "T2T TextEncoder subclass"

    def __init__(self, num_reserved_ids: int = NUM_RESERVED_TOKENS) -> None:
        self._num_reserved_ids = num_reserved_ids

    @property
    def num_reserved_ids(self) -> int:
        return self._num_reserved_ids

    def encode(self, s: str) -> list[int]:
        return [int(w) + self._num_reserved_ids for w in s.split()]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        """The project's batch entry (datagen), one ``encode`` a text."""
        return [self.encode(t) for t in texts]

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        if strip_extraneous:
            ids = strip_ids(ids, list(range(self._num_reserved_ids or 0)))
        return " ".join(self.decode_list(ids))

    def decode_list(self, ids: Iterable[int]) -> list[str]:
        return [
            RESERVED_TOKENS[int(i)]
            if 0 <= i < self._num_reserved_ids
            else str(i - self._num_reserved_ids)
            for i in ids
        ]

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError()


class TokenTextEncoder:
    """T2T's ``TokenTextEncoder``: whitespace tokens <-> line numbers of a vocab file."""

    graph_kind = "T2T token"  # no in-graph encoder for the exporter

    def __init__(
        self,
        vocab_filename: str | None,
        reverse: bool = False,
        vocab_list: Sequence[str] | None = None,
        replace_oov: str | None = None,
        num_reserved_ids: int = NUM_RESERVED_TOKENS,
    ) -> None:
        self._reverse = reverse
        self._replace_oov = replace_oov
        self._num_reserved_ids = num_reserved_ids
        if vocab_filename:
            if not fileio.isfile(vocab_filename):
                raise DataError(
                    f"token vocabulary {vocab_filename} not found: VocabType.TOKEN needs your "
                    "own vocabulary file there (one token a line; <pad> and <EOS> first)."
                )
            with fileio.open(vocab_filename, encoding="utf-8") as f:
                tokens = [line.strip() for line in f.readlines()]
        else:
            tokens = list(RESERVED_TOKENS)
            tokens += [t for t in vocab_list or [] if t not in RESERVED_TOKENS]
        self._id_to_token = dict(enumerate(tokens))
        self._token_to_id = {t: i for i, t in self._id_to_token.items()}
        self._source = vocab_filename or "vocab_list"

    @property
    def vocab_size(self) -> int:
        return len(self._id_to_token)

    def encode(self, s: str) -> list[int]:
        tokens = s.strip().split()
        if self._replace_oov is not None:
            tokens = [t if t in self._token_to_id else self._replace_oov for t in tokens]
        missing = [t for t in tokens if t not in self._token_to_id]
        if missing:
            raise DataError(
                f"token {missing[0]!r} is not in {self._source}: add it, or give the problem "
                "an oov_token that the vocabulary holds."
            )
        ids = [self._token_to_id[t] for t in tokens]
        return ids[::-1] if self._reverse else ids

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def decode_list(self, ids: Iterable[int]) -> list[str]:
        ids = list(ids)
        seq = reversed(ids) if self._reverse else ids
        return [self._id_to_token.get(int(i), f"ID_{int(i)}") for i in seq]

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        """The tokens joined by spaces (T2T's ignores ``strip_extraneous`` here too)."""
        return " ".join(self.decode_list(ids))

    def store_to_file(self, filename: str) -> None:
        text = "".join(self._id_to_token[i] + "\n" for i in range(len(self._id_to_token)))
        write_text_atomically(filename, text)


for _encoder in (ByteTextEncoder, SubwordTextEncoder, TokenTextEncoder):
    TextEncoder.register(_encoder)

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.text_encoder")
