"""The built-in problems, hparams sets and models are registered once for every test, as the
tools do (``t2t_repro.commands.builtins``). Each test module's models, traced functions and
Keras state are released when the module ends, so a test process stays small however many
modules it runs (the suite runs in two such processes: ``make test``)."""

import gc

import pytest

from t2t_repro.commands.builtins import register_builtins

register_builtins()


@pytest.fixture(scope="module", autouse=True)
def _release_module_state():
    yield
    import keras

    keras.backend.clear_session()
    gc.collect()
