"""Small builders shared by model tests."""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparams_lib import create_hparams


def build_model(hparams_set: str = "transformer_tiny", overrides: str = "", vocab_size: int = 50,
                target_vocab_size: int | None = None):
    hp = create_hparams(hparams_set, overrides, input_vocab_size=vocab_size,
                        target_vocab_size=target_vocab_size or vocab_size)
    model = registry.model("transformer")(hp)
    model.build()
    return model
