"""T2T 1.15.7's optimizers (``tensor2tensor/utils/optimize.py``): ``make_optimizer(hp)``.

Which names run and with which T2T code's update rule: ``names.py``. The learning rate is
T2T's schedule (``learning_rate.T2TSchedule``) evaluated at the updates already applied;
``clip_grad_norm`` clips by global norm in every optimizer; the weight decay and gradient
noise T2T adds before it are the train step's (``regularization.py``).
"""

from __future__ import annotations

import keras

from t2t_repro.hparam import HParams
from t2t_repro.learning_rate import T2TSchedule
from t2t_repro.optimizer_names import check_optimizer_name
from t2t_repro.optimizers.adafactor import T2TAdafactor, check_decay_type
from t2t_repro.optimizers.adam import check_adam, make_adam
from t2t_repro.optimizers.loss_scale import check_loss_scaling
from t2t_repro.optimizers.tf1_rules import TF1Adagrad, TF1Ftrl, TF1Momentum, TF1RMSProp

ADAM_FAMILY = ("adam", "true_adam", "multistep_adam", "adam_w")


def check_optimizer(hp: HParams) -> str:
    """The registry key of ``hp.optimizer``; HParamsError (one line) before any work when it
    cannot run here."""
    key = check_optimizer_name(hp.optimizer)
    if key in ADAM_FAMILY:
        check_adam(key, hp)
    if key == "adafactor":
        check_decay_type(hp.optimizer_adafactor_decay_type)
    check_loss_scaling(hp)  # T2T's ConditionalOptimizer wraps it for float16 activations
    return key


def make_optimizer(hp: HParams, learning_rate=None) -> keras.optimizers.Optimizer:
    """T2T's optimizer ``hp.optimizer`` with its hparams and T2T's learning-rate schedule
    (``learning_rate``: another schedule or value, for tests)."""
    key = check_optimizer_name(hp.optimizer)
    lr = T2TSchedule(hp.values()) if learning_rate is None else learning_rate
    common = {"global_clipnorm": hp.clip_grad_norm or None}
    if key in ADAM_FAMILY:
        return make_adam(key, hp, lr, **common)
    if key == "adafactor":  # adafactor.py, adafactor_optimizer_from_hparams
        return T2TAdafactor(
            lr,
            decay_type=hp.optimizer_adafactor_decay_type,
            beta2=hp.optimizer_adafactor_beta2,
            memory_exponent=hp.optimizer_adafactor_memory_exponent,
            beta1=hp.optimizer_adafactor_beta1,
            clipping_threshold=hp.optimizer_adafactor_clipping_threshold,
            factored=hp.optimizer_adafactor_factored,
            multiply_by_parameter_scale=hp.optimizer_adafactor_multiply_by_parameter_scale,
            num_shards=hp.symbol_modality_num_shards,
            **common,
        )
    if key == "momentum":
        return TF1Momentum(
            lr,
            momentum=hp.optimizer_momentum_momentum,
            nesterov=hp.optimizer_momentum_nesterov,
            **common,
        )
    if key == "sgd":  # tf.train.GradientDescentOptimizer: var -= lr * g, as Keras' SGD
        return keras.optimizers.SGD(lr, name="sgd", **common)
    return {"adagrad": TF1Adagrad, "rms_prop": TF1RMSProp, "ftrl": TF1Ftrl}[key](lr, **common)
