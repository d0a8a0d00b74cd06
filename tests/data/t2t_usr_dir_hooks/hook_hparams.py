"""The hparams set the hooks' problems are asked with: T2T 1.15's transformer_base, shrunk."""

from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_hparams
def transformer_tiny_hooks():
    hparams = transformer.transformer_base()
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 16
    hparams.filter_size = 32
    hparams.num_heads = 2
    hparams.batch_size = 256
    return hparams
