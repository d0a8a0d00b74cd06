"""Constituency-parsing sets (``tensor2tensor/models/transformer.py``,
``transformer_parsing_base`` / ``transformer_parsing_big``; the paper's Table 4).

``transformer_parsing_paper`` is the paper's WSJ-only model: the EN-DE base model (post-norm,
``transformer_base``) with 4 layers and d_model 1024. T2T's own sets keep their names and
behaviour: ``transformer_parsing_base`` (v3 base, 6 layers, d 1024, dropout 0.2, warmup 16000;
its learning_rate=0.05 is dead under the v3 schedule, as in T2T) and
``transformer_parsing_big``. Source and target vocabularies differ, so the softmax is not
tied to the embeddings. ``transformer_parsing_cpu`` is the size we can train on 2 CPU cores.
"""

from hparams.transformer import transformer_base, transformer_base_v3, transformer_big_v3
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams
def transformer_parsing_paper() -> HParams:
    """Paper Table 4: 4 layers, d_model 1024, otherwise the EN-DE base model."""
    hp = transformer_base()
    hp.num_hidden_layers = 4
    hp.hidden_size = 1024
    hp.max_length = 512
    hp.shared_embedding_and_softmax_weights = False
    return hp


@register_hparams
def transformer_parsing_base() -> HParams:
    """T2T's WSJ-only parsing set (6 layers: T2T never set num_hidden_layers=4)."""
    hp = transformer_base_v3()
    hp.attention_dropout = 0.2
    hp.layer_prepostprocess_dropout = 0.2
    hp.max_length = 512
    hp.learning_rate_warmup_steps = 16000
    hp.hidden_size = 1024
    hp.learning_rate = 0.05
    hp.shared_embedding_and_softmax_weights = False
    return hp


@register_hparams
def transformer_parsing_big() -> HParams:
    """T2T's semi-supervised parsing set."""
    hp = transformer_big_v3()
    hp.max_length = 512
    hp.learning_rate_warmup_steps = 4000
    hp.layer_prepostprocess_dropout = 0.1
    hp.batch_size = 2048
    hp.learning_rate = 0.05
    hp.shared_embedding_and_softmax_weights = False
    return hp


@register_hparams
def transformer_parsing_cpu() -> HParams:
    """A parser that trains in about an hour on 2 CPU cores (the ptb_sample recipe)."""
    hp = transformer_base_v3()
    hp.num_hidden_layers = 3
    hp.hidden_size = 256
    hp.filter_size = 1024
    hp.num_heads = 4
    hp.max_length = 512
    hp.batch_size = 4096
    hp.layer_prepostprocess_dropout = 0.2
    hp.attention_dropout = 0.1
    hp.relu_dropout = 0.1
    hp.learning_rate_warmup_steps = 1000
    hp.shared_embedding_and_softmax_weights = False
    return hp
