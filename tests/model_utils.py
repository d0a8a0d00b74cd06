"""Small builders shared by model tests."""

from __future__ import annotations

from t2t_repro import registry
from t2t_repro.hparams_lib import create_hparams


def build_model(
    hparams_set: str = "transformer_tiny",
    overrides: str = "",
    vocab_size: int = 50,
    target_vocab_size: int | None = None,
):
    hp = create_hparams(
        hparams_set,
        overrides,
        input_vocab_size=vocab_size,
        target_vocab_size=target_vocab_size or vocab_size,
    )
    model = registry.model("transformer")(hp)
    model.build()
    return model


def toy_checkpoint_dir(root, overrides: str = "max_length=12", step: int = 7, seed: int = 1):
    """translate_toy data in ``root/data`` and an untrained transformer_tiny checkpoint (with
    hparams.json) in ``root/train``: what the decoder-side tools need, in seconds. The seeded
    initialisation makes its (nonsense) outputs deterministic, and for seed 1 non-empty."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)

    problem = registry.problem("translate_toy")
    problem.generate_data(str(root / "data"), str(root / "tmp"), progress=False)
    model = build_model(
        "transformer_tiny", overrides, vocab_size=problem.vocab_sizes(str(root / "data"))[0]
    )
    (root / "train").mkdir()
    (root / "train" / "hparams.json").write_text(model.hparams.to_json())
    tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), str(root / "train"), 3, checkpoint_name="ckpt"
    ).save(checkpoint_number=step)
    return root
