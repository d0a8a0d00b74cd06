"""Every row of the paper's Table 3 (EN-DE variations on the base model) as a named set.

Each set is the paper's base model (``transformer_base_v1``) with exactly the row's change, so
``--hparams_set=transformer_base_table3_a_h16`` reproduces that row. With d_k = d_v = d/h
(the paper's convention) the total key/value channels stay ``hidden_size``; row B changes
only d_k, i.e. ``attention_key_channels = h * d_k``.
"""

from collections.abc import Callable

from t2t_repro.builtin.hparams.transformer import transformer_base_v1
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams

# name suffix -> {hparam: value}; the paper's row label is in the comment.
TABLE3_ROWS: dict[str, dict[str, object]] = {
    "a_h1": {"num_heads": 1},  # A: h=1, d_k=d_v=512
    "a_h4": {"num_heads": 4},  # A: h=4, d_k=d_v=128
    "a_h16": {"num_heads": 16},  # A: h=16, d_k=d_v=32
    "a_h32": {"num_heads": 32},  # A: h=32, d_k=d_v=16
    "b_dk16": {"attention_key_channels": 8 * 16},  # B: d_k=16
    "b_dk32": {"attention_key_channels": 8 * 32},  # B: d_k=32
    "c_n2": {"num_hidden_layers": 2},  # C: N=2
    "c_n4": {"num_hidden_layers": 4},  # C: N=4
    "c_n8": {"num_hidden_layers": 8},  # C: N=8
    "c_d256": {"hidden_size": 256},  # C: d_model=256, d_k=d_v=32
    "c_d1024": {"hidden_size": 1024},  # C: d_model=1024, d_k=d_v=128
    "c_dff1024": {"filter_size": 1024},  # C: d_ff=1024
    "c_dff4096": {"filter_size": 4096},  # C: d_ff=4096
    "d_drop0": {"layer_prepostprocess_dropout": 0.0},  # D: P_drop=0.0
    "d_drop02": {"layer_prepostprocess_dropout": 0.2},  # D: P_drop=0.2
    "d_ls0": {"label_smoothing": 0.0},  # D: eps_ls=0.0
    "d_ls02": {"label_smoothing": 0.2},  # D: eps_ls=0.2
    "e_learned_pos": {"pos": "emb"},  # E: learned positional embedding
}


def _make_row(changes: dict[str, object]) -> Callable[[], HParams]:
    def row() -> HParams:
        hp = transformer_base_v1()
        for name, value in changes.items():
            hp.set_hparam(name, value)
        return hp

    return row


for _suffix, _changes in TABLE3_ROWS.items():
    _name = f"transformer_base_table3_{_suffix}"
    _fn = _make_row(_changes)
    _fn.__name__ = _name
    _fn.__doc__ = f"Paper Table 3 row: transformer_base_v1 with {_changes}."
    register_hparams(_name)(_fn)
