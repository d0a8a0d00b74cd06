"""Sets sized for small corpora on a CPU (Multi30k, the offline quickstart).

Multi30k has 29k training pairs: a base-sized model overfits and trains too slowly on two
cores, so these are small pre-norm models with heavier dropout and a short warmup (pre-norm
tolerates the larger learning rate that a short run needs).
"""

from t2t_repro.builtin.hparams.transformer import transformer_base_v3
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams
def transformer_multi30k_cpu() -> HParams:
    """Multi30k EN-DE/EN-FR in about an hour on 2 CPU cores (~1k target tokens/s there).

    An hour is only ~2,500 updates, so: small batches (more updates), a short warmup, and
    light dropout (the run is too short to overfit 29k pairs).
    """
    hp = transformer_base_v3()
    hp.num_hidden_layers = 3
    hp.hidden_size = 256
    hp.filter_size = 1024
    hp.num_heads = 4
    hp.batch_size = 2048
    hp.layer_prepostprocess_dropout = 0.1
    hp.attention_dropout = 0.0
    hp.relu_dropout = 0.0
    hp.learning_rate_constant = 1.0
    hp.learning_rate_warmup_steps = 500
    return hp


@register_hparams
def transformer_quickstart() -> HParams:
    """The offline quickstart's model: trains on the toy problem in a few minutes."""
    hp = transformer_base_v3()
    hp.num_hidden_layers = 2
    hp.hidden_size = 128
    hp.filter_size = 512
    hp.num_heads = 4
    hp.batch_size = 2048
    hp.layer_prepostprocess_dropout = 0.1
    hp.attention_dropout = 0.0
    hp.relu_dropout = 0.0
    # Half v3's constant: at 2.0 the peak rate (1e-2 for d=128) made eval loss jump around
    # the end of warmup on some runs; 1.0 with 200 warmup steps trains smoothly.
    hp.learning_rate_constant = 1.0
    hp.learning_rate_warmup_steps = 200
    return hp
