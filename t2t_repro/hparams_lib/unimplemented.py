"""Hparams that keep T2T's names and defaults but have only some of T2T's values implemented
here: any other value is refused in one line, so that a ``--hparams`` string or a usr_dir set
written for T2T never trains or decodes something else than it asks for.

``TRAINING`` ones change only how a model trains (the trainer checks them); the others also
change decoding (every loader checks them). ``tests/test_no_silent_flags.py`` fails on a
registered hparam that no code reads; a name listed here is read by this check.
"""

from __future__ import annotations

from t2t_repro.hparam import HParams, HParamsError

# name: (the values implemented here, why the others are refused / what to use instead)
IMPLEMENTED = {
    "norm_type": (("layer",), "only T2T's layer norm is implemented"),
    "self_attention_type": (
        ("dot_product", "dot_product_relative"),
        "T2T's other attention kinds (relative_v2, local, area...) are not implemented",
    ),
    "ffn_layer": (
        ("dense_relu_dense", "conv_hidden_relu"),  # T2T's old name of the same layer
        "only T2T's dense_relu_dense feed-forward layer is implemented",
    ),
}
TRAINING = {
    # tensor2tensor/utils/optimize.py, ``get_variable_initializer``: the layers here are
    # initialised as its uniform_unit_scaling with gain 1 (= xavier, Glorot uniform).
    "initializer": (
        ("uniform_unit_scaling", "xavier"),
        "the layers are initialised as T2T's uniform_unit_scaling with gain 1.0 (Glorot "
        "uniform); other initializers are not implemented",
    ),
    "initializer_gain": (
        (1.0,),
        "the layers are initialised as T2T's uniform_unit_scaling with gain 1.0",
    ),
}


def check_implemented(hp: HParams, source: str = "hparams", training: bool = False) -> None:
    """HParamsError (one line) for a value of ``IMPLEMENTED`` (and, when ``training``,
    ``TRAINING``) hparams that is not implemented here."""
    tables = (IMPLEMENTED, TRAINING) if training else (IMPLEMENTED,)
    for table in tables:
        for name, (values, reason) in table.items():
            if name not in hp or hp.get(name) in values:
                continue
            if name == "initializer_gain" and hp.get("initializer") == "xavier":
                continue  # T2T's xavier ignores the gain
            allowed = " or ".join(repr(v) for v in values)
            raise HParamsError(
                f"{source}: {name}={hp.get(name)!r} is not supported ({reason}); use {allowed}."
            )
