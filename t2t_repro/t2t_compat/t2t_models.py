"""The model names T2T 1.15 registers besides ``transformer`` and
``transformer_encoder`` (the classifier) (``@registry.register_model``
in its ``models/`` and ``rl/`` modules; tests/data/t2t_1.15.7_models.json, from
tools/t2t_reference/list_t2t_models.py): ``--model`` with one of them says it is T2T's and
not provided here, in one line, instead of "Unknown model" (``registry.note_not_provided``)."""

T2T_MODELS_NOT_PROVIDED = """
    aligned attention_lm attention_lm_moe autoencoder_autoregressive autoencoder_basic
    autoencoder_basic_discrete autoencoder_dual_discrete autoencoder_ordered_discrete
    autoencoder_residual autoencoder_residual_discrete autoencoder_residual_vae
    autoencoder_stacked basic_fc_relu byte_net cycle_gan dense_bitwise_categorical_policy
    diagonal_neural_gpu distillation evolved_transformer feed_forward_categorical_policy
    feed_forward_cnn_small_categorical_policy feed_forward_cnn_small_categorical_policy_new
    gene_expression_conv glow imagetransformer imagetransformer2d imagetransformer_moe
    img2img_transformer img2img_transformer_block_parallel lstm_encoder lstm_seq2seq
    lstm_seq2seq_attention lstm_seq2seq_attention_bidirectional_encoder
    lstm_seq2seq_bidirectional_encoder mtf_bitransformer mtf_image_transformer mtf_res_net
    mtf_transformer mtf_unitransformer nas_seq2_seq neural_assistant neural_deque_model
    neural_gpu neural_queue_model neural_stack_model next_frame_base
    next_frame_basic_deterministic next_frame_basic_recurrent next_frame_basic_stochastic
    next_frame_basic_stochastic_discrete next_frame_emily next_frame_epva next_frame_glow
    next_frame_savp next_frame_savp_rl next_frame_sv2p next_frame_sv2p_atari
    next_frame_sv2p_discrete next_frame_sv2p_legacy next_frame_sv2p_two_frames random_policy
    residual_shuffle_exchange resnet revnet shake_shake shuffle_network
    similarity_transformer slice_net sliced_gan super_lm text_cnn transformer_ae
    transformer_aux transformer_block_parallel transformer_memory
    transformer_moe transformer_nat transformer_regressor transformer_revnet
    transformer_scorer transformer_sketch transformer_symshard transformer_vae_flow_prior
    universal_transformer universal_transformer_encoder vqa_attention_baseline
    vqa_combined_self_attention vqa_iterative_combined_self_attention
    vqa_recurrent_self_attention vqa_self_attention vqa_simple_image_self_attention xception
""".split()

WHY = (
    "this project runs its transformer (and transformer_encoder, a classifier): use "
    "--model=transformer with an hparams set"
)


def t2t_models_not_provided() -> dict[str, str]:
    """{T2T 1.15 model name: why} for ``registry.note_not_provided``."""
    return dict.fromkeys(T2T_MODELS_NOT_PROVIDED, WHY)
