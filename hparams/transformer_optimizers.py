"""T2T 1.15's Transformer sets that differ from the others in their optimizer, with T2T's
values (``tensor2tensor/models/transformer.py``), checked against T2T itself
(``tests/data/t2t_reference/t2t_1.15.7_hparams.json``).

T2T's Adafactor sets made by ``update_hparams_for_tpu`` (``transformer_tpu``,
``transformer_tiny_tpu``, ``transformer_tall_pretrain_lm_tpu_adafactor``...) are in
``transformer_tpu.py``; ``optimizer="Adafactor"`` itself works in any set.
"""

from t2t_repro.builtin.hparams.transformer import transformer_base
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams
def transformer_base_multistep8() -> HParams:
    """T2T's ``transformer_base`` simulating 8 GPUs: MultistepAdam over 8 micro-batches."""
    hp = transformer_base()
    hp.optimizer = "multistep_adam"
    hp.optimizer_multistep_accumulate_steps = 8
    return hp


@register_hparams
def transformer_tall() -> HParams:
    """T2T's LM set for pretraining/fine-tuning (its multiproblem fields do nothing here)."""
    hp = transformer_base()
    hp.batch_size = 2048
    hp.hidden_size = 768
    hp.filter_size = 3072
    hp.num_hidden_layers = 12
    hp.num_heads = 12
    hp.label_smoothing = 0.0
    hp.max_length = 1024
    hp.eval_drop_long_sequences = True
    hp.multiproblem_mixing_schedule = "pretrain"
    hp.multiproblem_vocab_size = 65536
    hp.clip_grad_norm = 1.0
    return hp


@register_hparams
def transformer_tall_pretrain_lm() -> HParams:
    """T2T's LM pretraining set: AdamW (decay 0.01 x the learning-rate constant), cosdecay."""
    hp = transformer_tall()
    hp.learning_rate_constant = 2e-4
    hp.learning_rate_schedule = "linear_warmup*constant*cosdecay"
    hp.optimizer = "adam_w"
    hp.weight_decay = 0.01 * hp.learning_rate_constant
    hp.optimizer_adam_beta1 = 0.9
    hp.optimizer_adam_beta2 = 0.999
    hp.optimizer_adam_epsilon = 1e-8
    hp.multiproblem_schedule_max_examples = 5e8
    hp.learning_rate_decay_steps = 5000000
    return hp
