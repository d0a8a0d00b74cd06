"""Registered hparams sets. Importing this package registers every set."""

from t2t_repro.builtin.hparams import (  # noqa: F401
    basic,
    parsing,
    small_data,
    table3,
    transformer,
    transformer_optimizers,
    transformer_relative,
    transformer_task_sets,
    transformer_tpu,
    transformer_variants,
)
