"""T2T 1.15's one-knob and size variants of ``transformer_base``, under T2T's names with T2T's
values (``tensor2tensor/models/transformer.py``: ``transformer_l2`` ... ``transformer_tall_big``).

These are the sets of T2T's ``models/transformer.py`` that only set values this project stores:
layer count, heads, key channels, filter and hidden size, dropout, label smoothing, and the
``transformer_clean`` family and ``transformer_tall_big``. (``multiproblem_*``, which the tall sets
set, mean something only to T2T's ``MultiProblem``; T2T's transformer on a single problem ignores
them, as this project does: ``t2t_repro/t2t_hparams.py``.) The T2T sets that need a feature or
optimizer not implemented here are named, with the reason, when asked for
(``t2t_repro/t2t_compat/refusals.py``). Each set is checked value by value against T2T 1.15.7's
own (``tests/test_t2t_hparams.py``).
"""

from t2t_repro.builtin.hparams.transformer import (
    _make_big,
    transformer_base,
    transformer_base_single_gpu,
    transformer_base_v2,
)
from t2t_repro.builtin.hparams.transformer_optimizers import transformer_tall
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams

NAMES: list[str] = []  # every set this module registers (t2t_compat/transformer.py exports them)


def _register(fn):
    NAMES.append(fn.__name__)
    return register_hparams(fn)


def _with(name: str, **values) -> None:
    """Registers T2T's ``name``: ``transformer_base`` with ``values`` set."""

    def make() -> HParams:
        hp = transformer_base()
        for key, value in values.items():
            hp.set_hparam(key, value)
        return hp

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"T2T 1.15's ``{name}``: transformer_base with {values}."
    globals()[name] = _register(make)


# T2T's one-knob sweeps of transformer_base (models/transformer.py, transformer_l2 ...).
for _layers in (2, 4, 8, 10):
    _with(f"transformer_l{_layers}", num_hidden_layers=_layers)
for _heads in (1, 4, 16, 32):
    _with(f"transformer_h{_heads}", num_heads=_heads)
for _channels in (128, 256):
    _with(f"transformer_k{_channels}", attention_key_channels=_channels)
for _filter in (1024, 4096):
    _with(f"transformer_ff{_filter}", filter_size=_filter)
for _hidden in (256, 1024):
    _with(f"transformer_hs{_hidden}", hidden_size=_hidden)
_with("transformer_dr0", layer_prepostprocess_dropout=0.0)
_with("transformer_dr2", layer_prepostprocess_dropout=0.2)
_with("transformer_ls0", label_smoothing=0.0)
_with("transformer_ls2", label_smoothing=0.2)


@_register
def transformer_big_dr1() -> HParams:
    """T2T 1.15's ``transformer_big_dr1``: transformer_base at big size, dropout 0.1."""
    return _make_big(transformer_base(), 0.1)


@_register
def transformer_big_dr2() -> HParams:
    """T2T 1.15's ``transformer_big_dr2``: ``transformer_big_dr1`` with dropout 0.2."""
    return _make_big(transformer_base(), 0.2)


@_register
def transformer_clean() -> HParams:
    """T2T 1.15's ``transformer_clean``: v2 base with no dropout, no label smoothing and no
    length limit."""
    hp = transformer_base_v2()
    hp.label_smoothing = 0.0
    hp.layer_prepostprocess_dropout = 0.0
    hp.attention_dropout = 0.0
    hp.relu_dropout = 0.0
    hp.max_length = 0
    return hp


@_register
def transformer_clean_big() -> HParams:
    """T2T 1.15's ``transformer_clean_big``: ``transformer_clean`` at hidden 1024, filter 4096."""
    hp = transformer_clean()
    hp.hidden_size = 1024
    hp.filter_size = 4096
    return hp


@_register
def transformer_tall_big() -> HParams:
    """T2T 1.15's ``transformer_tall_big``: ``transformer_tall`` with 18 layers."""
    hp = transformer_tall()
    hp.num_hidden_layers = 18
    return hp


@_register
def transformer_parsing_ice() -> HParams:
    """T2T 1.15's ``transformer_parsing_ice``: the single-GPU base at batch 4096, unshared
    softmax."""
    hp = transformer_base_single_gpu()
    hp.batch_size = 4096
    hp.shared_embedding_and_softmax_weights = False
    return hp
