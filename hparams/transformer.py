"""The Transformer hparams sets, under T2T 1.15's names with T2T 1.15's values
(``tensor2tensor/models/transformer.py``; the same functions are a usr_dir's
``tensor2tensor.models.transformer``, ``t2t_repro/t2t_compat/transformer.py``).

As in T2T 1.15, ``transformer_base`` is ``transformer_base_v3`` (pre-norm, Adam beta2 0.997,
the factor-string schedule) and ``transformer_big`` / ``transformer_big_enfr`` build on it.
The paper's configurations are ``transformer_base_v1`` (T2T's own name for the set that was
``transformer_base`` when the paper appeared: post-norm, residual and embedding dropout only,
Adam 0.9/0.98/1e-9, the paper's learning-rate formula with 4000 warmup steps) and, in T2T's
style, ``transformer_big_v1`` and ``transformer_big_enfr_v1`` (names T2T 1.15 does not use).
Until issue #47 the plain names were the paper's sets here; a run saved under that meaning
resumes with its values (``t2t_repro/hparams_lib/renamed.py``).
"""

from t2t_repro.builtin.hparams.basic import basic_params1
from t2t_repro.hparam import HParams
from t2t_repro.registry import register_hparams


@register_hparams
def transformer_base_v1() -> HParams:
    """The paper's base model (post-norm ``none``/``dan``), T2T v1 names and defaults."""
    hp = basic_params1()
    hp.moe_num_experts = 16  # T2T's transformer_base_v1 sets them (nothing reads them here)
    hp.moe_loss_coef = 1e-3
    hp.norm_type = "layer"
    hp.hidden_size = 512
    hp.batch_size = 4096
    hp.max_length = 256
    hp.clip_grad_norm = 0.0
    hp.optimizer_adam_epsilon = 1e-9
    hp.optimizer_adam_beta1 = 0.9
    hp.optimizer_adam_beta2 = 0.98
    hp.learning_rate_schedule = "legacy"
    hp.learning_rate_decay_scheme = "noam"
    hp.learning_rate = 0.1
    hp.learning_rate_warmup_steps = 4000
    hp.initializer = "uniform_unit_scaling"
    hp.initializer_gain = 1.0
    hp.num_hidden_layers = 6
    hp.weight_decay = 0.0
    hp.label_smoothing = 0.1
    hp.shared_embedding_and_softmax_weights = True
    hp.symbol_modality_num_shards = 16
    hp.add_hparam("filter_size", 2048)
    hp.add_hparam("num_encoder_layers", 0)  # 0: num_hidden_layers.
    hp.add_hparam("num_decoder_layers", 0)
    hp.add_hparam("num_heads", 8)
    hp.add_hparam("attention_key_channels", 0)  # 0: hidden_size.
    hp.add_hparam("attention_value_channels", 0)
    hp.add_hparam("ffn_layer", "dense_relu_dense")
    hp.add_hparam("attention_dropout", 0.0)
    # Dims along which a dropout mask is shared, "0,1" (layers/dropout.py); "": none.
    hp.add_hparam("attention_dropout_broadcast_dims", "")
    hp.add_hparam("relu_dropout", 0.0)
    hp.add_hparam("relu_dropout_broadcast_dims", "")
    # "timing": T2T's concatenated sin|cos signal; "timing_paper": the paper's interleaved
    # formula; "emb": T2T's learned positions, a table of max_length rows on each side (Table
    # 3 row E); "none": none (T2T's pos=None).
    hp.add_hparam("pos", "timing")
    hp.add_hparam("use_target_space_embedding", True)
    hp.add_hparam("target_space_vocab_size", 32)
    hp.add_hparam("use_pad_remover", True)
    # T2T's self-attention kind: "dot_product", or "dot_product_relative" (Shaw et al. 2018)
    # with relative positions clipped at basic_params1's max_relative_position
    # (hparams/transformer_relative.py).
    hp.add_hparam("self_attention_type", "dot_product")
    # T2T's choices of the attention biases (models/attention_biases.py): a -log(1 + distance)
    # term in the self-attentions, a causal decoder (False: full attention over the targets,
    # in training), a causal encoder.
    hp.add_hparam("proximity_bias", False)
    hp.add_hparam("causal_decoder_self_attention", True)
    hp.add_hparam("unidirectional_encoder", False)
    # T2T's hard attention: > 0 keeps each query's k largest softmax weights, Gumbel noise of
    # that weight added first (layers/hard_attention.py).
    hp.add_hparam("hard_attention_k", 0)
    hp.add_hparam("gumbel_noise_weight", 0.0)
    # T2T's 3-D q/k/v/o attention variables: their draws, no run-time query scaling
    # (layers/attention.py)
    hp.add_hparam("attention_variables_3d", False)
    # T2T's name for the eval metrics' TensorBoard tags in place of the problem's ("": the
    # problem's; metrics/eval_metrics.py, t2t_tag).
    hp.add_hparam("overload_eval_metric_name", "")
    # Not T2T: for targets that fill the input's words one slot each (a parser's POS tags,
    # which the problem names: target_slot_ids), the decoder also gets the positional signal
    # of "slots emitted so far", i.e. of the input word its next slot is for.
    hp.add_hparam("slot_signal", False)
    # Not T2T, needs slot_signal: the decoder's input at each position also gets the encoder's
    # output at that input word (layers/slot_features.py).
    hp.add_hparam("slot_source_feed", False)
    return hp


@register_hparams
def transformer_base_v2() -> HParams:
    """T2T v1.2.5+ base: pre-norm with final LayerNorm, attention/ReLU dropout, warmup 8000."""
    hp = transformer_base_v1()
    hp.layer_preprocess_sequence = "n"
    hp.layer_postprocess_sequence = "da"
    hp.layer_prepostprocess_dropout = 0.1
    hp.attention_dropout = 0.1
    hp.relu_dropout = 0.1
    hp.learning_rate_warmup_steps = 8000
    hp.learning_rate = 0.2
    return hp


@register_hparams
def transformer_base_v3() -> HParams:
    """T2T v1.10+ ``transformer_base``: v2 with beta2 0.997 and the factor-string schedule."""
    hp = transformer_base_v2()
    hp.optimizer_adam_beta2 = 0.997
    hp.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    hp.learning_rate_constant = 2.0
    return hp


@register_hparams
def transformer_base() -> HParams:
    """T2T 1.15's ``transformer_base``: ``transformer_base_v3``."""
    return transformer_base_v3()


def _make_big(hp: HParams, dropout: float) -> HParams:
    hp.hidden_size = 1024
    hp.filter_size = 4096
    hp.num_heads = 16
    hp.layer_prepostprocess_dropout = dropout
    return hp


@register_hparams
def transformer_big() -> HParams:
    """T2T 1.15's ``transformer_big``: v3 base at big size, dropout 0.3, batch 2048."""
    hp = _make_big(transformer_base(), 0.3)
    hp.batch_size = 2048
    return hp


@register_hparams
def transformer_big_enfr() -> HParams:
    """T2T 1.15's ``transformer_big_enfr`` (``transformer_big_dr1`` unshared, filter 8192)."""
    hp = _make_big(transformer_base(), 0.1)
    hp.shared_embedding_and_softmax_weights = False
    hp.filter_size = 8192
    return hp


# The names these two had here before T2T's own names meant T2T's sets (issue #47): kept so
# that a run whose flags.txt names them resumes.
register_hparams("transformer_big_v3")(transformer_big)
register_hparams("transformer_big_enfr_v3")(transformer_big_enfr)


@register_hparams
def transformer_big_v1() -> HParams:
    """The paper's big model: d=1024, d_ff=4096, h=16, P_drop=0.3 (EN-DE)."""
    return _make_big(transformer_base_v1(), 0.3)


@register_hparams
def transformer_big_enfr_v1() -> HParams:
    """The paper's big model for EN-FR, which used P_drop=0.1."""
    return _make_big(transformer_base_v1(), 0.1)


@register_hparams
def transformer_base_single_gpu() -> HParams:
    """T2T 1.15 single-GPU base: batch 1024, 0.1*linear_warmup*rsqrt_decay with warmup 16000."""
    hp = transformer_base()
    hp.batch_size = 1024
    hp.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay"
    hp.learning_rate_constant = 0.1
    hp.learning_rate_warmup_steps = 16000
    return hp


@register_hparams
def transformer_big_single_gpu() -> HParams:
    """T2T 1.15 single-GPU big: dropout 0.1, warmup 16000."""
    hp = transformer_big()
    hp.layer_prepostprocess_dropout = 0.1
    hp.learning_rate_warmup_steps = 16000
    return hp


def _resize(hp: HParams, layers: int, hidden: int, filter_size: int, heads: int) -> HParams:
    hp.num_hidden_layers = layers
    hp.hidden_size = hidden
    hp.filter_size = filter_size
    hp.num_heads = heads
    return hp


@register_hparams
def transformer_tiny() -> HParams:
    """T2T 1.15 tiny: transformer_base with 2 layers, hidden 128, filter 512, 4 heads."""
    return _resize(transformer_base(), 2, 128, 512, 4)


@register_hparams
def transformer_small() -> HParams:
    """T2T 1.15 small: transformer_base with 2 layers, hidden 256, filter 1024, 4 heads."""
    return _resize(transformer_base(), 2, 256, 1024, 4)


@register_hparams
def transformer_test() -> HParams:
    """T2T's test set: transformer_base with 2 layers, hidden 16, filter 8, 2 heads."""
    return _resize(transformer_base(), 2, 16, 8, 2)
