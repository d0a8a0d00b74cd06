"""T2T's optimizer names, looked up as T2T looks them up, and which of them run here.

T2T 1.15.7 registers ``adam``, ``multistep_adam``, ``momentum``, ``yellow_fin``, ``true_adam``,
``adam_w`` and ``adafactor`` (``tensor2tensor/utils/optimize.py``), then every name of
``tf.contrib.layers.OPTIMIZER_CLS_NAMES`` in snake case unless already taken (``adagrad``,
``ftrl``, ``rms_prop``, ``sgd``: ``optimize.py, _register_base_optimizer``). An hparams value is
mapped to a key as ``tensor2tensor/utils/registry.py, optimizer`` does: ``SGD`` -> ``sgd``,
``RMSProp`` -> ``rms_prop``, anything else through ``misc_utils.camelcase_to_snakecase``
(``Adam`` -> ``adam``, ``Adafactor`` -> ``adafactor``, ``AdamW`` -> ``adam_w``).
"""

from __future__ import annotations

import re

from t2t_repro.hparam import HParamsError

# tensor2tensor/utils/misc_utils.py, camelcase_to_snakecase.
_FIRST_CAP = re.compile("(.)([A-Z][a-z0-9]+)")
_ALL_CAP = re.compile("([a-z0-9])([A-Z])")

# Registry key -> the T2T code whose update rule runs here.
HONOURED = {
    "adam": "utils/optimize.py, adam (tf.contrib.opt.LazyAdamOptimizer)",
    "multistep_adam": "utils/multistep_optimizer.py, MultistepAdamOptimizer",
    "true_adam": "utils/optimize.py, true_adam (tf.train.AdamOptimizer)",
    "adam_w": "utils/optimize.py, adam_w (tf.contrib.opt.AdamWOptimizer)",
    "momentum": "utils/optimize.py, momentum (tf.train.MomentumOptimizer)",
    "adafactor": "utils/adafactor.py, AdafactorOptimizer",
    "sgd": "tf.contrib.layers OPTIMIZER_CLS_NAMES: tf.train.GradientDescentOptimizer",
    "adagrad": "tf.contrib.layers OPTIMIZER_CLS_NAMES: tf.train.AdagradOptimizer",
    "rms_prop": "tf.contrib.layers OPTIMIZER_CLS_NAMES: tf.train.RMSPropOptimizer",
    "ftrl": "tf.contrib.layers OPTIMIZER_CLS_NAMES: tf.train.FtrlOptimizer",
}
REFUSED = {
    "yellow_fin": "T2T's YellowFin (utils/yellowfin.py, an auto-tuning momentum optimizer of "
    "its own) is not implemented here",
}


def registry_key(name: str) -> str:
    """The key T2T's ``registry.optimizer(name)`` looks up."""
    if name == "SGD":
        return "sgd"
    if name == "RMSProp":
        return "rms_prop"
    return _ALL_CAP.sub(r"\1_\2", _FIRST_CAP.sub(r"\1_\2", name)).lower()


def check_optimizer_name(name: str) -> str:
    """The registry key of ``name``; HParamsError (one line) for a name T2T does not have or
    this project does not implement."""
    key = registry_key(str(name))
    if key in HONOURED:
        return key
    if key in REFUSED:
        raise HParamsError(f"optimizer={name!r}: {REFUSED[key]}; use another T2T optimizer.")
    raise HParamsError(
        f"optimizer={name!r} is not a T2T optimizer (T2T looks up {key!r}); "
        f"T2T's are: {', '.join(sorted([*HONOURED, *REFUSED]))}."
    )
