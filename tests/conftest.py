"""The built-in problems, hparams sets and models are registered once for every test, as the
tools do (``t2t_repro.commands.builtins``)."""

from t2t_repro.commands.builtins import register_builtins

register_builtins()
