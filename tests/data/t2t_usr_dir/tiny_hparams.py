"""An hparams set as a T2T user writes one: T2T 1.15's transformer_base, shrunk."""

from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_hparams
def transformer_tiny_usr():
    hparams = transformer.transformer_base()
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 16
    hparams.filter_size = 32
    hparams.set_hparam("num_heads", 2)
    hparams.batch_size = 512
    hparams.learning_rate_warmup_steps = 10
    hparams.add_hparam("usr_dir_note", "tiny")
    return hparams
