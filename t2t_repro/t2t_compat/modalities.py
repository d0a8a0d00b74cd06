"""``tensor2tensor.layers.modalities`` for a T2T usr_dir: the modality names a problem's
``hparams`` override sets (``layers/modalities.py``, ``ModalityType``). Text problems here
use symbol modalities, and a text classifier's target T2T's CLASS_LABEL; the other names exist
so such an override runs (the trainer refuses them in one line)."""

from t2t_repro.t2t_compat import refusals


class ModalityType:
    SYMBOL = "symbol"
    SYMBOL_WEIGHTS_ALL = "symbol_weights_all"
    SYMBOL_ONE_HOT = "symbol_one_hot"
    CLASS_LABEL = "class_label"
    # T2T's other class-label targets: names a problem may set, refused by the trainer.
    MULTI_LABEL = "multi_label"
    ONE_HOT_CLASS_LABEL = "one_hot_class_label"
    SIGMOID_CLASS_LABEL = "sigmoid_class_label"
    SIGMOID_MAX_POOLING_CLASS_LABEL = "sigmoid_max_pooling_class_label"
    SOFTMAX_AVERAGE_POOLING_CLASS_LABEL = "softmax_average_pooling_class_label"
    SOFTMAX_LAST_TIMESTEP_CLASS_LABEL = "softmax_last_timestep_class_label"
    SOFTMAX_MAX_POOLING_CLASS_LABEL = "softmax_max_pooling_class_label"
    IDENTITY = "identity"
    IDENTITY_SYMBOL = "identity_symbol"


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.layers.modalities")
