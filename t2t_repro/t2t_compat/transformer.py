"""``tensor2tensor.models.transformer`` for a T2T usr_dir: T2T 1.15's hparams functions.

They are the project's registered sets themselves (``hparams/transformer.py``,
``hparams/parsing.py``), which carry T2T 1.15's names and values: a usr_dir's
``hparams = transformer.transformer_base(); hparams.hidden_size = 256`` starts from the set
T2T would have given it, and ``--hparams_set=transformer_base`` is the same set.

The model class itself is not T2T's: ``Transformer`` exists so a usr_dir that names it imports;
a model registered from it is refused when used (``t2t_compat/registry.py``).
"""

from __future__ import annotations

from t2t_repro.builtin.hparams import transformer_task_sets, transformer_variants
from t2t_repro.builtin.hparams import transformer_tpu as tpu_sets
from t2t_repro.builtin.hparams.parsing import transformer_parsing_base, transformer_parsing_big
from t2t_repro.builtin.hparams.transformer import (
    transformer_base,
    transformer_base_single_gpu,
    transformer_base_v1,
    transformer_base_v2,
    transformer_base_v3,
    transformer_big,
    transformer_big_enfr,
    transformer_big_single_gpu,
    transformer_small,
    transformer_test,
    transformer_tiny,
)
from t2t_repro.builtin.hparams.transformer_optimizers import (
    transformer_base_multistep8,
    transformer_tall,
    transformer_tall_pretrain_lm,
)
from t2t_repro.builtin.hparams.transformer_relative import (
    transformer_relative,
    transformer_relative_big,
    transformer_relative_tiny,
)
from t2t_repro.builtin.hparams.transformer_tpu import update_hparams_for_tpu
from t2t_repro.t2t_compat import refusals

__all__ = [
    "Transformer",
    "transformer_base",
    "transformer_base_multistep8",
    "transformer_base_single_gpu",
    "transformer_base_v1",
    "transformer_base_v2",
    "transformer_base_v3",
    "transformer_big",
    "transformer_big_enfr",
    "transformer_big_single_gpu",
    "transformer_parsing_base",
    "transformer_parsing_big",
    "transformer_relative",
    "transformer_relative_big",
    "transformer_relative_tiny",
    "transformer_small",
    "transformer_tall",
    "transformer_tall_pretrain_lm",
    "transformer_test",
    "transformer_tiny",
    "update_hparams_for_tpu",
]

# T2T's one-knob and size variants (transformer_l2, transformer_big_dr1, ...).
globals().update({name: getattr(transformer_variants, name) for name in transformer_variants.NAMES})
__all__ += transformer_variants.NAMES
# T2T's TPU sets (transformer_tpu, transformer_tiny_tpu, ...).
globals().update({name: getattr(tpu_sets, name) for name in tpu_sets.NAMES})
__all__ += tpu_sets.NAMES
globals().update(
    {name: getattr(transformer_task_sets, name) for name in transformer_task_sets.NAMES}
)
__all__ += transformer_task_sets.NAMES


class Transformer:
    """Stands for T2T's model class so that a usr_dir naming it imports; this project's
    ``transformer`` model is chosen with --model=transformer, not by subclassing."""


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.models.transformer")
