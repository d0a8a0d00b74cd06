"""T2T's ``basic_params1`` defaults that the Transformer sets build on
(``tensor2tensor/layers/common_hparams.py``, ``basic_params1``).

Only hparams that this project reads are defined; each carries T2T's name and default so a
T2T ``--hparams`` string means the same thing here. Those written below have basic_params1's
values; every other name the table of T2T's hparams says the sets store
(``t2t_repro/t2t_hparams.py``, ``stored_defaults``) is added at T2T's value.
"""

from t2t_repro import t2t_hparams
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams("basic_1")
def basic_params1() -> HParams:
    hp = _written_here()
    for name, value in t2t_hparams.stored_defaults().items():
        if name not in hp:
            hp.add_hparam(name, value)
    # basic_params1's own values of two names nothing reads here (the table's are
    # transformer_base_v1's, which sets them again): read back as T2T's
    hp.moe_num_experts = 64
    hp.moe_loss_coef = 1e-2
    return hp


def _written_here() -> HParams:
    return HParams(
        # Batching: batch_size is a token budget per replica for text problems
        # (tensor2tensor/utils/data_reader.py, batching_scheme).
        batch_size=4096,
        use_fixed_batch_size=False,
        max_length=0,  # 0: use batch_size.
        min_length=0,
        min_length_bucket=8,
        length_bucket_step=1.1,
        # Not T2T: > 1 pads every batch to one of a few lengths (8, then x step rounded up to
        # a multiple of 4, ..., max_length) so that --xla compiles a bounded set of shapes;
        # 0 keeps T2T's buckets (t2t_repro/data/bucketing.py, padded_batching_scheme).
        padded_bucket_step=0.0,
        # Not T2T: > 0 replaces training source words by their shape class with probability
        # alpha / (alpha + count) (word-level sources only; t2t_repro/data/word_dropout.py).
        word_dropout_alpha=0.0,
        eval_drop_long_sequences=False,
        batch_shuffle_size=512,
        max_input_seq_length=0,
        max_target_seq_length=0,
        # Model size.
        num_hidden_layers=4,
        hidden_size=64,
        # Regularisation.
        dropout=0.2,
        label_smoothing=0.1,
        layer_preprocess_sequence="none",
        layer_postprocess_sequence="dan",
        layer_prepostprocess_dropout=0.1,
        norm_type="layer",
        norm_epsilon=1e-6,
        # T2T's L2 penalty, weight noise and gradient noise (tensor2tensor/utils/optimize.py,
        # weight_decay_and_noise; t2t_repro/optimizers/regularization.py).
        weight_decay=1e-6,
        weight_noise=0.0,
        grad_noise_scale=0.0,
        clip_grad_norm=2.0,
        # Initialisation.
        initializer="orthogonal",
        initializer_gain=1.5,
        # Optimiser and learning rate.
        optimizer="adam",
        optimizer_adam_epsilon=1e-6,
        optimizer_adam_beta1=0.85,
        optimizer_adam_beta2=0.997,
        # Divides the schedule's step; accumulates only under multistep_adam (T2T's meaning).
        optimizer_multistep_accumulate_steps=0,
        # T2T's other optimizers' hparams (t2t_repro/optimizers/).
        optimizer_momentum_momentum=0.9,
        optimizer_momentum_nesterov=False,
        optimizer_adafactor_beta1=0.0,
        optimizer_adafactor_beta2=0.999,
        optimizer_adafactor_factored=True,
        optimizer_adafactor_decay_type="pow",
        optimizer_adafactor_memory_exponent=0.8,
        optimizer_adafactor_clipping_threshold=1.0,
        optimizer_adafactor_multiply_by_parameter_scale=True,
        learning_rate=0.1,
        learning_rate_schedule="legacy",
        learning_rate_constant=1.0,
        learning_rate_decay_scheme="none",
        learning_rate_warmup_steps=100,
        # Embeddings.
        multiply_embedding_mode="sqrt_depth",
        shared_embedding_and_softmax_weights=False,
        shared_embedding=False,
        # T2T keeps each embedding in this many row blocks; only Adafactor's update depends
        # on it (t2t_repro/optimizers/adafactor.py).
        symbol_modality_num_shards=1,
        # Relative self-attention distance (T2T's basic_params1 holds it; 0: off; the
        # transformer's self_attention_type="dot_product_relative" uses it).
        max_relative_position=0,
        # Greedy decoding (beam_size=1): "random" samples (t2t_repro/decoding/sampling.py).
        sampling_method="argmax",
        sampling_temp=1.0,  # 0: argmax; T2T's default 1.0 samples from the model's softmax
        sampling_keep_top_k=-1,  # -1: every token; k > 0: only the k most likely
    )
