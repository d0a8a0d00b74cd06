"""``tensor2tensor.utils.hparam`` for a T2T usr_dir: T2T's ``HParams`` is this project's
(``t2t_repro/hparam.py``, with T2T's methods); T2T's string parser is refused in one line."""

from t2t_repro.hparam import HParams
from t2t_repro.t2t_compat import refusals

__all__ = ["HParams"]

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.hparam")
