"""T2T 1.15's TPU sets of ``tensor2tensor/models/transformer.py``, under T2T's names with
T2T's values: those made by ``update_hparams_for_tpu`` (Adafactor with ``rsqrt_decay``, one
symbol shard, ``max_length`` 64, batch at most 2048, and dropout masks shared along dimensions:
``attention_dropout_broadcast_dims="0,1"``, ``relu_dropout_broadcast_dims="1"``,
``layer_prepostprocess_dropout_broadcast_dims="1"``, ``layers/dropout.py``) and
``transformer_wikitext103_l4k_v0``, which sets the same by hand. Each is checked value by
value against T2T 1.15.7's own (``tests/test_t2t_sets.py``).

T2T's set of float16 activations, ``transformer_fairseq_fp16_activation_big``, is here too,
beside the bfloat16 one. T2T's TPU sets that need more than this (bfloat16 weights, MLPerf
mode, TransformerMemory, time series) are named, with the reason, when asked for
(``t2t_repro/t2t_compat/refusals.py``).
"""

from t2t_repro.builtin.hparams.transformer import (
    transformer_base,
    transformer_big,
    transformer_big_enfr,
    transformer_small,
    transformer_tiny,
)
from t2t_repro.builtin.hparams.transformer_optimizers import transformer_tall_pretrain_lm
from t2t_repro.builtin.hparams.transformer_task_sets import transformer_timeseries
from t2t_repro.builtin.hparams.transformer_variants import transformer_clean_big
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams

NAMES: list[str] = []  # every set this module registers (t2t_compat/transformer.py exports them)


def _register(fn):
    NAMES.append(fn.__name__)
    return register_hparams(fn)


def update_hparams_for_tpu(hparams: HParams) -> HParams:
    """T2T's ``update_hparams_for_tpu`` (``models/transformer.py``): Adafactor with its
    schedule, fixed-size batches of at most 2048, and the memory-saving dropout broadcast."""
    hparams.optimizer = "Adafactor"
    hparams.learning_rate_schedule = "rsqrt_decay"
    hparams.learning_rate_warmup_steps = 10000
    hparams.symbol_modality_num_shards = 1
    hparams.max_length = 64
    if hparams.batch_size > 2048:
        hparams.batch_size = 2048
    hparams.attention_dropout_broadcast_dims = "0,1"  # batch, heads
    hparams.relu_dropout_broadcast_dims = "1"  # length
    hparams.layer_prepostprocess_dropout_broadcast_dims = "1"  # length
    return hparams


@_register
def transformer_tpu() -> HParams:
    """T2T's ``transformer_base`` for TPU."""
    return update_hparams_for_tpu(transformer_base())


@_register
def transformer_tpu_bf16_activation() -> HParams:
    """T2T's ``transformer_tpu`` with bfloat16 activations (float32 variables): trained and
    decoded under Keras's mixed bfloat16 policy here (``training/run_setup.py``)."""
    hparams = transformer_tpu()
    hparams.activation_dtype = "bfloat16"
    return hparams


@_register
def transformer_fairseq_fp16_activation_big() -> HParams:
    """T2T's ``transformer_big`` with float16 activations (float32 variables) and batches of
    3584 tokens, "intended to mirror those used in arxiv.org/pdf/1806.00187.pdf" (T2T's
    docstring; not a TPU set, registered beside ``transformer_tpu_bf16_activation``): trained
    under Keras's mixed float16 policy with T2T's loss scaling (``optimizers/loss_scale.py``)."""
    hparams = transformer_big()
    hparams.activation_dtype = "float16"
    hparams.batch_size = 3584
    return hparams


@_register
def transformer_packed_tpu() -> HParams:
    """T2T's deprecated alias of ``transformer_tpu``."""
    return transformer_tpu()


@_register
def transformer_big_tpu() -> HParams:
    """T2T's ``transformer_big`` for TPU."""
    return update_hparams_for_tpu(transformer_big())


@_register
def transformer_tiny_tpu() -> HParams:
    """T2T's ``transformer_tiny`` for TPU."""
    return update_hparams_for_tpu(transformer_tiny())


@_register
def transformer_small_tpu() -> HParams:
    """T2T's ``transformer_small`` for TPU."""
    return update_hparams_for_tpu(transformer_small())


@_register
def transformer_timeseries_tpu() -> HParams:
    """T2T's ``transformer_timeseries`` for TPU, its batch of 256 kept."""
    hp = update_hparams_for_tpu(transformer_timeseries())
    hp.batch_size = 256
    return hp


@_register
def transformer_big_enfr_tpu() -> HParams:
    """T2T's: 8 heads, so that the matrices stay at least 128 wide."""
    hp = transformer_big_enfr()
    hp.num_heads = 8
    return update_hparams_for_tpu(hp)


@_register
def transformer_clean_big_tpu() -> HParams:
    """T2T's ``transformer_clean_big`` (no dropout, no label smoothing) for TPU."""
    return update_hparams_for_tpu(transformer_clean_big())


@_register
def transformer_lm_tpu_0() -> HParams:
    """T2T's set for languagemodel_lm1b8k on TPU (92M parameters)."""
    hp = update_hparams_for_tpu(transformer_clean_big())
    hp.num_heads = 4
    hp.batch_size = 4096
    hp.shared_embedding_and_softmax_weights = False
    hp.layer_prepostprocess_dropout = 0.1
    return hp


@_register
def transformer_lm_tpu_1() -> HParams:
    """T2T's set for languagemodel_lm1b8k on TPU (335M parameters)."""
    hp = transformer_lm_tpu_0()
    hp.hidden_size = 2048
    hp.filter_size = 8192
    return hp


@_register
def transformer_tall_pretrain_lm_tpu_adafactor() -> HParams:
    """T2T's LM pretraining set on TPU (its multiproblem fields do nothing here)."""
    hp = update_hparams_for_tpu(transformer_tall_pretrain_lm())
    hp.max_length = 1024
    hp.batch_size = 8
    hp.multiproblem_vocab_size = 2**16
    return hp


@_register
def transformer_tall_pretrain_lm_tpu_adafactor_large() -> HParams:
    """T2T's large LM pretraining set on TPU: 32k-wide filters, batch 4."""
    hp = transformer_tall_pretrain_lm_tpu_adafactor()
    hp.hidden_size = 1024
    hp.num_heads = 16
    hp.filter_size = 32768
    hp.batch_size = 4
    hp.multiproblem_mixing_schedule = "constant"
    hp.multiproblem_per_task_threshold = "320,80,160,1,80,160,2,20,10,5"
    return hp


@_register
def transformer_tall_pretrain_lm_tpu() -> HParams:
    """The TPU LM pretraining set with AdamW again (``update_hparams_for_tpu`` reset it)."""
    hp = transformer_tall_pretrain_lm_tpu_adafactor()
    hp.learning_rate_constant = 2e-4
    hp.learning_rate_schedule = "linear_warmup * constant * cosdecay"
    hp.optimizer = "adam_w"
    hp.weight_decay = 0.01 * hp.learning_rate_constant
    return hp


@_register
def transformer_wikitext103_l4k_v0() -> HParams:
    """T2T's set for languagemodel_wikitext103_l4k: the TPU settings by hand, 4k lengths."""
    hp = transformer_big()
    hp.optimizer = "Adafactor"
    hp.learning_rate_schedule = "rsqrt_decay"
    hp.learning_rate_warmup_steps = 10000
    hp.num_heads = 4
    hp.max_length = 4096
    hp.batch_size = 4096
    hp.shared_embedding_and_softmax_weights = False
    hp.num_hidden_layers = 8
    hp.attention_dropout = 0.1
    hp.layer_prepostprocess_dropout = 0.2
    hp.relu_dropout = 0.1
    hp.label_smoothing = 0.0
    hp.attention_dropout_broadcast_dims = "0,1"  # batch, heads
    hp.relu_dropout_broadcast_dims = "1"  # length
    hp.layer_prepostprocess_dropout_broadcast_dims = "1"  # length
    hp.symbol_modality_num_shards = 1
    return hp
