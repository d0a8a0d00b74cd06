"""One id per whitespace token: T2T's ``TokenTextEncoder`` (``data_generators/text_encoder.py``).

The parsing targets need it: the subword tokenizer splits ``/NP`` into ``" /"`` + ``NP`` and
merges punctuation tags with the following closer's slash (``" . /"``), so a label, closer or
POS tag was not one id, and a decoder could emit half a closer. Here every label, closer and tag
is exactly one id, which the tree-constrained search relies on. The vocab file has one token per
line; lines 0 and 1 are ``<pad>`` and ``<EOS>`` (PAD_ID 0, EOS_ID 1) and line 2 is ``<UNK>``,
which any token outside the vocabulary is encoded as.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from t2t_repro import fileio
from t2t_repro.text_encoding.text_encoder import VocabFileError

RESERVED = ("<pad>", "<EOS>", "<UNK>")
UNK_ID = 2


class TokenTextEncoder:
    """Whitespace tokens <-> ids from a one-token-per-line vocab file."""

    # Which in-graph encoder the SavedModel export uses (serving/exporter.py).
    graph_kind = "tokens"

    def __init__(self, filename: str | None = None, tokens: Sequence[str] = ()) -> None:
        if filename is not None:
            tokens = self._read(filename)
        tokens = list(tokens)
        if tuple(tokens[: len(RESERVED)]) != RESERVED:
            tokens = list(RESERVED) + [t for t in tokens if t not in RESERVED]
        if len(set(tokens)) != len(tokens):
            raise VocabFileError(
                f"token vocabulary {filename or ''} repeats a token; rebuild it "
                "(delete the file and rerun t2t-datagen)."
            )
        self._tokens = tuple(tokens)
        self._ids = {t: i for i, t in enumerate(self._tokens)}

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

    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    @property
    def tokens(self) -> tuple[str, ...]:
        return self._tokens

    def token_id(self, token: str) -> int:
        return self._ids.get(token, UNK_ID)

    def encode(self, text: str) -> list[int]:
        return [self._ids.get(t, UNK_ID) for t in text.split()]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def decode_list(self, ids: Iterable[int]) -> list[str]:
        n = len(self._tokens)
        return [self._tokens[i] if 0 <= i < n else "" for i in map(int, ids)]

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        ids = [int(i) for i in ids]
        if strip_extraneous:
            while ids and 0 <= ids[-1] < 2:
                ids.pop()
        return " ".join(t for t in self.decode_list(ids) if t)

    def store_to_file(self, path: str) -> None:
        """Writes the vocab atomically (temp file, then rename)."""
        fileio.makedirs_for(path)
        tmp = path + ".tmp"
        with fileio.open(tmp, "w", encoding="utf-8") as f:
            f.writelines(t + "\n" for t in self._tokens)
        fileio.replace(tmp, path)
