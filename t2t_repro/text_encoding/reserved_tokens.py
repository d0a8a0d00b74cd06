"""T2T's reserved tokens and their ids (``tensor2tensor/data_generators/text_encoder.py``,
``RESERVED_TOKENS``, ``PAD_ID``, ``EOS_ID``).

A module of constants on its own so that decoding, serving and problems can name the ids
without importing the subword encoder (and with it numba).
"""

from __future__ import annotations

PAD = "<pad>"
EOS = "<EOS>"
RESERVED_TOKENS = [PAD, EOS]
NUM_RESERVED_TOKENS = len(RESERVED_TOKENS)
PAD_ID = RESERVED_TOKENS.index(PAD)  # 0
EOS_ID = RESERVED_TOKENS.index(EOS)  # 1
