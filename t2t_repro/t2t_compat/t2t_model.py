"""``tensor2tensor.utils.t2t_model`` for a T2T usr_dir: ``T2TModel`` exists so that a usr_dir
defining its own model imports; registering one and using it is refused in one line
(``t2t_compat/registry.py``, ``register_model``)."""

from t2t_repro.t2t_compat import refusals


class T2TModel:
    """T2T's model base class; a subclass cannot run here (only ``transformer`` does)."""


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.t2t_model")
