"""``tensor2tensor.layers.modalities`` for a T2T usr_dir: the modality names a problem's
``hparams`` override sets (``layers/modalities.py``, ``ModalityType``). Text problems here
always use symbol modalities; the names exist so such an override runs."""

from t2t_repro.t2t_compat import refusals


class ModalityType:
    SYMBOL = "symbol"
    SYMBOL_WEIGHTS_ALL = "symbol_weights_all"
    SYMBOL_ONE_HOT = "symbol_one_hot"
    CLASS_LABEL = "class_label"
    IDENTITY = "identity"
    IDENTITY_SYMBOL = "identity_symbol"


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.layers.modalities")
