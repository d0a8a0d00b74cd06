"""Turning a decoded id row into the token ids that get detokenised, and into text."""

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


def decode_text(encoder, ids: list[int]) -> str:
    """``encoder.decode(ids)``; an id past the vocabulary (one ``vocab_divisor`` pads the
    logits with, ``hparams_lib/sizes.py``, which T2T's searches emit as any other) has no text.
    T2T's SubwordTextEncoder decodes it as "" and its TokenTextEncoder as ``ID_<id>``, and so
    do ours; T2T's ByteTextEncoder (``struct.error``) and ClassLabelEncoder (``IndexError``)
    fail on it: here their text is that of the other ids (a padded class: ""), so a decode or
    a training run's dev decodes do not stop there."""
    try:
        return encoder.decode(ids)
    except (IndexError, ValueError):
        size = getattr(encoder, "vocab_size", None)
        if size is None or all(i < size for i in ids):
            raise
        kept = [i for i in ids if i < size]
        return encoder.decode(kept) if kept else ""
