"""T2T 1.15's sets made for tasks this project has no model or problem for, registered under
T2T's names with T2T's values because every value they set is one this project honours or one
that changes nothing here (``tensor2tensor/models/transformer.py``):

* ``transformer_ada_lmpackedbase`` (and ``_dialog``, ``_relative``): T2T's vector-quantised
  gating set with its feed-forward reset to ``dense_relu_dense``, so the gating names
  (``gating_type``, ``moe_*``, ``beta``...) are read by nothing, in T2T as here;
* ``transformer_supervised_attention``: ``transformer_base`` plus the names of T2T's
  supervised-attention loss, read only with a problem that has expected attentions;
* ``transformer_tall_finetune_textclass``, ``transformer_tall_train_tied``,
  ``transformer_tall_finetune_tied``: ``transformer_tall`` schedules for T2T's
  ``MultiProblem`` (its ``multiproblem_*`` names mean nothing to a single problem);
* ``transformer_tall_finetune_uniencdec``, ``transformer_tall_train_uniencdec``: CNN/DM
  with a unidirectional encoder (T2T's ``unidirectional_encoder``);
* ``transformer_timeseries`` (and ``_tpu``) and ``transformer_librispeech_v1``: sizes and
  lengths only;
* ``transformer_prepend_v1``, ``_v2`` and ``transformer_prepend``: a seq2seq problem trained
  with its inputs and a 0 prepended to the targets (T2T's ``prepend_mode``,
  ``data/input_pipeline.py``, ``preprocess_common``), batches up to ``batch_size`` long.

Each is checked value by value against T2T 1.15.7's own (``tests/test_t2t_sets.py``).
"""

from t2t_repro.builtin.hparams.transformer import (
    transformer_base,
    transformer_base_v1,
    transformer_base_v2,
    transformer_small,
)
from t2t_repro.builtin.hparams.transformer_optimizers import transformer_tall
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams

NAMES: list[str] = []  # every set this module registers (t2t_compat/transformer.py exports them)


def _register(fn):
    NAMES.append(fn.__name__)
    return register_hparams(fn)


def _vq_ada_32ex_packed() -> HParams:
    """T2T's ``transformer_base_vq_ada_32ex_packed`` (not registered here: its ``local_moe``
    feed-forward is not implemented), the base of the three ``ada`` sets."""
    hp = transformer_base_v2()
    hp.moe_num_experts = 32
    hp.moe_k = 1
    hp.batch_size = 5072
    hp.shared_embedding_and_softmax_weights = False
    hp.learning_rate_warmup_steps = 10000
    hp.learning_rate_decay_steps = 27200  # one epoch of T2T's packed lm1b at batch 128
    hp.num_heads = 4
    hp.num_decoder_layers = 6
    hp.label_smoothing = 0.0
    hp.layer_prepostprocess_dropout = 0.1
    hp.layer_postprocess_sequence = "dan"
    hp.layer_preprocess_sequence = "none"
    hp.weight_decay = 1e-06
    hp.attention_dropout = 0.1
    hp.optimizer = "Adafactor"
    hp.learning_rate_schedule = "linear_warmup*rsqrt_decay*linear_decay"
    hp.learning_rate = 0.1
    hp.learning_rate_constant = 1.0
    return hp


@_register
def transformer_ada_lmpackedbase() -> HParams:
    """T2T 1.15's ``transformer_ada_lmpackedbase``."""
    return _vq_ada_32ex_packed()


@_register
def transformer_ada_lmpackedbase_dialog() -> HParams:
    """T2T 1.15's ``transformer_ada_lmpackedbase_dialog``: examples to 1024, batch 4096."""
    hp = _vq_ada_32ex_packed()
    hp.max_length = 1024
    hp.batch_size = 4096
    return hp


@_register
def transformer_ada_lmpackedbase_relative() -> HParams:
    """T2T 1.15's ``transformer_ada_lmpackedbase_relative`` (the same values)."""
    return _vq_ada_32ex_packed()


@_register
def transformer_supervised_attention() -> HParams:
    """T2T 1.15's ``transformer_supervised_attention``: transformer_base plus the loss names
    of supervised attention (at T2T's values: nothing reads them here)."""
    hp = transformer_base()
    hp.expected_attention_loss_type = "kl_divergence"
    hp.expected_attention_loss_multiplier = 1.0
    return hp


def _tall_multiproblem(schedule: str, constant: float, warmup: int, decay: int) -> HParams:
    """``transformer_tall`` with one of T2T's fine-tuning or tied schedules."""
    hp = transformer_tall()
    hp.learning_rate_schedule = schedule
    hp.learning_rate_constant = constant
    hp.learning_rate_warmup_steps = warmup
    hp.learning_rate_decay_steps = decay  # train steps: this many or fewer (T2T's comment)
    hp.multiproblem_schedule_max_examples = 0
    hp.multiproblem_target_eval_only = True
    hp.multiproblem_reweight_label_loss = True
    return hp


@_register
def transformer_tall_finetune_textclass() -> HParams:
    """T2T 1.15's ``transformer_tall_finetune_textclass``."""
    hp = _tall_multiproblem("linear_warmup*constant*linear_decay", 6.25e-5, 50, 25000)
    hp.multiproblem_label_weight = 0.95
    return hp


def _tied(constant: float, warmup: int, decay: int) -> HParams:
    """T2T's tied sets (CNN/DM summarization as a language model), with true_adam."""
    hp = _tall_multiproblem("linear_warmup*constant*cosdecay", constant, warmup, decay)
    hp.multiproblem_max_input_length = 750
    hp.multiproblem_max_target_length = 100
    hp.multiproblem_label_weight = 1.0
    hp.optimizer = "true_adam"
    return hp


@_register
def transformer_tall_train_tied() -> HParams:
    """T2T 1.15's ``transformer_tall_train_tied``."""
    return _tied(2e-4, 8000, 150000)


@_register
def transformer_tall_finetune_tied() -> HParams:
    """T2T 1.15's ``transformer_tall_finetune_tied``."""
    return _tied(5e-5, 100, 80000)


def _uniencdec(constant: float, decay: int) -> HParams:
    """T2T's CNN/DM sets with a unidirectional encoder (``unidirectional_encoder``: a causal
    encoder, ``models/attention_biases.py``), true_adam and the cosine decay."""
    hp = transformer_tall()
    hp.max_input_seq_length = 750
    hp.max_target_seq_length = 100
    hp.optimizer = "true_adam"
    hp.learning_rate_schedule = "linear_warmup*constant*cosdecay"
    hp.learning_rate_decay_steps = decay
    hp.learning_rate_constant = constant
    hp.unidirectional_encoder = True
    return hp


@_register
def transformer_tall_finetune_uniencdec() -> HParams:
    """T2T 1.15's ``transformer_tall_finetune_uniencdec`` (100 warmup steps)."""
    hp = _uniencdec(5e-5, 80000)
    hp.learning_rate_warmup_steps = 100
    return hp


@_register
def transformer_tall_train_uniencdec() -> HParams:
    """T2T 1.15's ``transformer_tall_train_uniencdec`` (transformer_tall's warmup)."""
    return _uniencdec(2e-4, 150000)


@_register
def transformer_timeseries() -> HParams:
    """T2T 1.15's ``transformer_timeseries``: transformer_small at batch 256, 2,000 warmup."""
    hp = transformer_small()
    hp.batch_size = 256
    hp.learning_rate_warmup_steps = 2000
    return hp


@_register
def transformer_librispeech_v1() -> HParams:
    """T2T 1.15's ``transformer_librispeech_v1``: its sizes and LibriSpeech's lengths
    (``set_librispeech_length_hparams``)."""
    hp = transformer_base()
    hp.num_heads = 4
    hp.filter_size = 1024
    hp.hidden_size = 256
    hp.num_encoder_layers = 5
    hp.num_decoder_layers = 3
    hp.learning_rate = 0.15
    hp.batch_size = 6000000
    hp.max_length = 132000
    hp.max_input_seq_length = 1650
    hp.max_target_seq_length = 350
    return hp


def _prepend(hp: HParams) -> HParams:
    hp.prepend_mode = "prepend_inputs_masked_attention"
    hp.max_length = 0
    return hp


@_register
def transformer_prepend_v2() -> HParams:
    """T2T's: ``transformer_base_v2``, the inputs prepended to the targets."""
    return _prepend(transformer_base_v2())


@_register
def transformer_prepend_v1() -> HParams:
    """T2T's: ``transformer_base_v1``, the inputs prepended to the targets."""
    return _prepend(transformer_base_v1())


@_register
def transformer_prepend() -> HParams:
    """T2T's: ``transformer_prepend_v2``."""
    return transformer_prepend_v2()
