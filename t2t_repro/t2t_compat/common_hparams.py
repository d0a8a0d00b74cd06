"""``tensor2tensor.layers.common_hparams`` for a T2T usr_dir: ``basic_params1`` is this
project's (``hparams/basic.py``: T2T's names and defaults of the hparams it reads); T2T's
tuning ranges are refused in one line when used."""

from t2t_repro.builtin.hparams.basic import basic_params1
from t2t_repro.t2t_compat import refusals

__all__ = ["basic_params1"]

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.layers.common_hparams")
