"""``tensor2tensor.data_generators.text_encoder`` for a T2T usr_dir: T2T's reserved tokens,
escaping and encoders (``text_encoder.py``). The encoders are this project's T2T-exact ones
(``t2t_repro/text_encoding/``) with T2T's signatures (``encode(s)``, ``store_to_file(filename)``,
so keyword calls work); the subword encoder adds T2T's internals
(``subword_text_encoder.py``), the token encoder T2T's ``_token_to_id``/``_id_to_token``.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence

import numpy as np

from t2t_repro import fileio
from t2t_repro.t2t_compat import refusals
from t2t_repro.t2t_compat.subword_text_encoder import SubwordTextEncoder
from t2t_repro.text_encoding import byte_encoder, escaping, token_encoder
from t2t_repro.text_encoding import text_encoder as project_text_encoder
from t2t_repro.text_encoding.reserved_tokens import (
    EOS,
    EOS_ID,
    NUM_RESERVED_TOKENS,
    PAD,
    PAD_ID,
    RESERVED_TOKENS,
)
from t2t_repro.text_encoding.text_encoder import decode_utf8_dropping_errors

__all__ = [
    "EOS",
    "EOS_ID",
    "NUM_RESERVED_TOKENS",
    "PAD",
    "PAD_ID",
    "RESERVED_TOKENS",
    "RESERVED_TOKENS_BYTES",
    "ByteTextEncoder",
    "ClassLabelEncoder",
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

# T2T's module names usr_dirs use: its reserved tokens as bytes, its escaping (the project's).
RESERVED_TOKENS_BYTES = [t.encode("ascii") for t in RESERVED_TOKENS]
_ESCAPE_CHARS = escaping.ESCAPE_CHARS
_UNESCAPE_REGEX = escaping._UNESCAPE_RE
_escape_token = escaping.escape_token
_unescape_token = escaping.unescape_token


def native_to_unicode(s) -> str:
    """T2T's: bytes decoded as UTF-8, bytes that are not UTF-8 dropped (T2T logs them)."""
    return decode_utf8_dropping_errors(s) if isinstance(s, bytes) else s


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


class ByteTextEncoder(byte_encoder.ByteTextEncoder):
    """T2T's ``ByteTextEncoder`` (``text_encoding/byte_encoder.py``), T2T's argument name."""

    def encode(self, s: str) -> list[int]:
        return super().encode(s)


class TokenTextEncoder(token_encoder.TokenTextEncoder):
    """T2T's ``TokenTextEncoder`` with T2T's signature and defaults: a file is read as T2T
    reads it (each line a token, nothing added), a list gets ``<pad>``/``<EOS>`` first, an
    unknown token is a ``KeyError`` (``token_encoder.UnknownTokenError``) unless
    ``replace_oov`` is given. The one implementation is ``text_encoding/token_encoder.py``."""

    def __init__(
        self,
        vocab_filename: str | None,
        reverse: bool = False,
        vocab_list: Sequence[str] | None = None,
        replace_oov: str | None = None,
        num_reserved_ids: int = NUM_RESERVED_TOKENS,
    ) -> None:
        if not vocab_filename and vocab_list is None:  # T2T asserts
            raise ValueError("TokenTextEncoder needs a vocab_filename or a vocab_list.")
        super().__init__(
            vocab_filename or None,
            vocab_list or (),
            reverse=reverse,
            replace_oov=replace_oov,
            reserved=RESERVED_TOKENS,
            strict=False,
        )
        self._num_reserved_ids = num_reserved_ids
        # No in-graph encoder for the exporter: T2T's token files may hold what it cannot.
        self.graph_kind = "T2T token"
        # T2T's two dicts, which pointer_generator_word and usr_dirs' encode overrides read
        # (``TokenTextEncoder._init_vocab``): the vocabulary's own, a repeat at its last id.
        self._token_to_id = self._ids
        self._id_to_token = dict(enumerate(self.tokens))

    def encode(self, s: str) -> list[int]:
        return super().encode(s)

    def store_to_file(self, filename: str) -> None:
        super().store_to_file(filename)

    @property
    def num_reserved_ids(self) -> int:
        return self._num_reserved_ids

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        """T2T's ignores ``strip_extraneous``: PAD and EOS decode as their tokens."""
        return super().decode(ids)


class ClassLabelEncoder(TextEncoder):
    """T2T's encoder of a text classifier's labels (``text_encoder.py``, ``ClassLabelEncoder``):
    a label's id is its index in ``class_labels`` (or the lines of ``class_labels_fname``), no
    reserved ids; ``decode`` of one id is that label's name."""

    graph_kind = "labels"  # in the graph: the names, a constant (serving/labels.py)

    def __init__(
        self, class_labels: Sequence[str] | None = None, class_labels_fname: str | None = None
    ) -> None:
        super().__init__(num_reserved_ids=0)
        if class_labels_fname:
            with fileio.open(class_labels_fname, encoding="utf-8") as f:
                class_labels = [label.strip() for label in f.readlines()]
        if not class_labels:
            raise ValueError("ClassLabelEncoder needs class_labels (or a class_labels_fname).")
        self._class_labels = list(class_labels)

    def encode(self, s: str) -> int:
        return self._class_labels.index(s)

    def decode(self, ids, strip_extraneous: bool = False) -> str:
        del strip_extraneous
        label_id = ids
        if isinstance(label_id, (list, tuple)):
            if len(label_id) != 1:
                raise ValueError(f"ClassLabelEncoder decodes one label id, not {list(ids)}.")
            (label_id,) = label_id
        return self._class_labels[int(np.squeeze(label_id))]

    def decode_list(self, ids: Iterable[int]) -> list[str]:
        return [self._class_labels[int(i)] for i in ids]

    @property
    def vocab_size(self) -> int:
        return len(self._class_labels)


for _encoder in (
    byte_encoder.ByteTextEncoder,
    project_text_encoder.SubwordTextEncoder,
    token_encoder.TokenTextEncoder,
):
    TextEncoder.register(_encoder)  # the project's own too: generator_utils builds them

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.text_encoder")
