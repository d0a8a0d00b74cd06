"""A usr_dir whose transformer set is built as T2T 1.15's own ``transformer_base_v1`` is
(``models/transformer.py``): from ``common_hparams.basic_params1()``, adding the transformer's
names one by one, and assigning ``num_sampled_classes``, a name ``basic_params1`` lacks (T2T's
``HParams`` keeps it as a plain attribute). Written here in that style for
tests/test_t2t_basic_params_set.py."""

from tensor2tensor.layers import common_hparams
from tensor2tensor.utils import registry


@registry.register_hparams
def basic_built_transformer():
    hparams = common_hparams.basic_params1()
    hparams.norm_type = "layer"
    hparams.hidden_size = 64
    hparams.num_hidden_layers = 1
    hparams.initializer = "uniform_unit_scaling"
    hparams.initializer_gain = 1.0
    hparams.num_sampled_classes = 0
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    for name, value in (
        ("filter_size", 128),
        ("num_encoder_layers", 0),
        ("num_decoder_layers", 0),
        ("num_heads", 4),
        ("attention_key_channels", 0),
        ("attention_value_channels", 0),
        ("ffn_layer", "dense_relu_dense"),
        ("parameter_attention_key_channels", 0),
        ("parameter_attention_value_channels", 0),
        ("attention_dropout", 0.1),
        ("attention_dropout_broadcast_dims", ""),
        ("relu_dropout", 0.1),
        ("relu_dropout_broadcast_dims", ""),
        ("pos", "timing"),
        ("nbr_decoder_problems", 1),
        ("proximity_bias", False),
        ("causal_decoder_self_attention", True),
        ("use_pad_remover", True),
        ("self_attention_type", "dot_product"),
        ("conv_first_kernel", 3),
        ("attention_variables_3d", False),
        ("use_target_space_embedding", True),
        ("moe_overhead_train", 1.0),
        ("moe_overhead_eval", 2.0),
        ("overload_eval_metric_name", ""),
        ("unidirectional_encoder", False),
        ("hard_attention_k", 0),
        ("gumbel_noise_weight", 0.0),
    ):
        hparams.add_hparam(name, value)
    return hparams
