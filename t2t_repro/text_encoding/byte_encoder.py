"""T2T's ``ByteTextEncoder``: one id per UTF-8 byte, shifted past the reserved ids
(``tensor2tensor/data_generators/text_encoder.py``, ``ByteTextEncoder``).

A character vocabulary (T2T's ``VocabType.CHARACTER``) needs no vocabulary file: id = byte + 2,
ids 0 and 1 are ``<pad>`` and ``<EOS>``, so the vocabulary has 258 ids.
"""

from __future__ import annotations

from collections.abc import Iterable

from t2t_repro.text_encoding.reserved_tokens import NUM_RESERVED_TOKENS, RESERVED_TOKENS


class ByteTextEncoder:
    """Text <-> UTF-8 bytes shifted by the reserved ids, exactly as T2T's."""

    # The export encodes sources in its graph (graph_byte_encoder.py), and decodes no bytes.
    graph_kind = "bytes"

    def __init__(self, num_reserved_ids: int = NUM_RESERVED_TOKENS) -> None:
        self._num_reserved_ids = num_reserved_ids

    @property
    def num_reserved_ids(self) -> int:
        return self._num_reserved_ids

    @property
    def vocab_size(self) -> int:
        return 2**8 + self._num_reserved_ids

    def encode(self, text: str) -> list[int]:
        return [b + self._num_reserved_ids for b in text.encode("utf-8")]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def decode_list(self, ids: Iterable[int]) -> list[bytes]:
        """One ``bytes`` per id: a reserved id gives its token's bytes (T2T's
        ``RESERVED_TOKENS_BYTES``)."""
        n = self._num_reserved_ids
        out = []
        for i in map(int, ids):
            out.append(RESERVED_TOKENS[i].encode("utf-8") if 0 <= i < n else bytes([i - n]))
        return out

    def decode(self, ids: Iterable[int], strip_extraneous: bool = False) -> str:
        """The text of ``ids`` (invalid UTF-8 replaced, as T2T); ``strip_extraneous`` drops
        trailing reserved ids first (T2T's ``strip_ids``)."""
        ids = [int(i) for i in ids]
        if strip_extraneous:
            while ids and 0 <= ids[-1] < self._num_reserved_ids:
                ids.pop()
        return b"".join(self.decode_list(ids)).decode("utf-8", "replace")
