"""Turning a decoded id row into the token ids that get detokenised."""

from __future__ import annotations

from t2t_repro.text_encoding.reserved_tokens import EOS_ID, PAD_ID


def strip_after_eos(ids_row, eos_id: int = EOS_ID) -> list[int]:
    """Drops the initial id (column 0), cuts at the first EOS (``decoding._save_until_eos``)
    and drops the trailing pads of the fixed-size buffer. A PAD the model emitted mid-sentence
    is kept, as T2T keeps it."""
    ids = [int(t) for t in list(ids_row)[1:]]
    if eos_id in ids:
        ids = ids[: ids.index(eos_id)]
    while ids and ids[-1] == PAD_ID:
        ids.pop()
    return ids
