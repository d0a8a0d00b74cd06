"""T2T 1.15's relative-attention sets (``tensor2tensor/models/transformer.py``,
``transformer_relative``, ``transformer_relative_tiny``, ``transformer_relative_big``).

Self-attention with relative position representations (Shaw et al. 2018, T2T's
``dot_product_relative``) clipped at 20, and no absolute positional signal (T2T's
``pos = None``, "none" here). They start from T2T 1.15's ``transformer_base`` and
``transformer_big``, registered here under those names.
"""

from t2t_repro.builtin.hparams.transformer import transformer_base, transformer_big
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


def _relative(hp: HParams) -> HParams:
    hp.pos = "none"
    hp.self_attention_type = "dot_product_relative"
    hp.max_relative_position = 20
    return hp


@register_hparams
def transformer_relative() -> HParams:
    """T2T 1.15's ``transformer_base`` with relative self-attention instead of positions."""
    return _relative(transformer_base())


@register_hparams
def transformer_relative_tiny() -> HParams:
    """``transformer_relative`` with 2 layers, hidden 128, filter 512, 4 heads."""
    hp = transformer_relative()
    hp.num_hidden_layers = 2
    hp.hidden_size = 128
    hp.filter_size = 512
    hp.num_heads = 4
    return hp


@register_hparams
def transformer_relative_big() -> HParams:
    """T2T 1.15's ``transformer_big`` with relative self-attention instead of positions."""
    return _relative(transformer_big())
