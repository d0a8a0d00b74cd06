"""Constituency-parsing sets (``tensor2tensor/models/transformer.py``,
``transformer_parsing_base`` / ``transformer_parsing_big``; the paper's Table 4).

``transformer_parsing_paper`` is the paper's WSJ-only model: the EN-DE base model (post-norm,
``transformer_base_v1``) with 4 layers and d_model 1024; source and target vocabularies
differ, so its softmax is not tied to the embeddings. T2T's own sets keep their names and
T2T 1.15's values: ``transformer_parsing_base`` (v3 base, 6 layers, d 1024, dropout 0.2,
warmup 16000, untied softmax; its learning_rate=0.05 is dead under the v3 schedule, as in
T2T) and ``transformer_parsing_big`` (T2T's ``transformer_big`` with the target embedding
tied to the softmax, as T2T's set leaves it). ``transformer_parsing_cpu`` is the size we can
train on 2 CPU cores; ``transformer_parsing_cpu_hour`` adds the dropout an hour of it needs and
``transformer_parsing_cpu_words`` is the parsing recipe's model (docs/parsing.md).
"""

from t2t_repro.builtin.hparams.transformer import (
    transformer_base,
    transformer_base_v1,
    transformer_big,
)
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams
def transformer_parsing_paper() -> HParams:
    """Paper Table 4: 4 layers, d_model 1024, otherwise the EN-DE base model."""
    hp = transformer_base_v1()
    hp.num_hidden_layers = 4
    hp.hidden_size = 1024
    hp.max_length = 512
    hp.shared_embedding_and_softmax_weights = False
    return hp


@register_hparams
def transformer_parsing_base() -> HParams:
    """T2T's WSJ-only parsing set (6 layers: T2T never set num_hidden_layers=4)."""
    hp = transformer_base()
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
    """T2T's semi-supervised parsing set. T2T's sets ``shared_source_target_embedding``, a
    name its HParams never registered (so it is in no run's hparams): the set keeps
    ``transformer_big``'s tied target embedding and softmax."""
    hp = transformer_big()
    hp.max_length = 512
    hp.learning_rate_warmup_steps = 4000
    hp.layer_prepostprocess_dropout = 0.1
    hp.batch_size = 2048
    hp.learning_rate = 0.05
    return hp


@register_hparams
def transformer_parsing_cpu() -> HParams:
    """A parser that trains in about an hour on 2 CPU cores (the ptb_sample recipe)."""
    hp = transformer_base()
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


@register_hparams
def transformer_parsing_cpu_hour() -> HParams:
    """``transformer_parsing_cpu`` with more dropout, for an hour of bf16 on 2 cores (~60 epochs
    of the Penn Treebank sample); the parsing levers' base (recipes/parsing_levers.py)."""
    hp = transformer_parsing_cpu()
    hp.layer_prepostprocess_dropout = 0.3
    hp.attention_dropout = 0.2
    return hp


@register_hparams
def transformer_parsing_cpu_words() -> HParams:
    """The parsing recipe's model (recipes/wsj_parsing.py) for a one-id-per-word source
    (``wsj_parsing_ptb_sample_words``): ``transformer_parsing_cpu_hour`` plus the decoder's slot
    signal, the source feed of the word each slot fills, and word dropout (not T2T; what each
    does and what it bought on dev: docs/parsing.md, "The recipe's hparams set")."""
    hp = transformer_parsing_cpu_hour()
    hp.slot_signal = True
    hp.slot_source_feed = True
    hp.word_dropout_alpha = 2.0
    return hp
