"""Analytic FLOPs against a hand count on a tiny configuration."""

from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.models.flops import forward_flops, training_flops


def test_hand_count_one_layer():
    hp = create_hparams(
        "transformer_base_v1",
        "num_hidden_layers=1,hidden_size=4,filter_size=8,num_heads=2",
        input_vocab_size=10,
    )
    B, S, T, d, ff, V = 1, 3, 2, 4, 8, 10
    # Encoder: q,k,v,o projections 4*(2*S*d*d); QK^T and AV 2*(2*S*S*d); FFN 2*(2*S*d*ff).
    enc = 4 * 2 * S * d * d + 2 * 2 * S * S * d + 2 * 2 * S * d * ff
    # Decoder self-attention as above with T; enc-dec: q,o on T, k,v on S, products T*S.
    dec_self = 4 * 2 * T * d * d + 2 * 2 * T * T * d
    dec_cross = 2 * 2 * T * d * d + 2 * 2 * S * d * d + 2 * 2 * T * S * d
    dec = dec_self + dec_cross + 2 * 2 * T * d * ff
    softmax = 2 * T * d * V
    assert forward_flops(hp, B, S, T) == enc + dec + softmax
    assert training_flops(hp, B, S, T) == 3 * (enc + dec + softmax)


def test_scales_linearly_in_batch():
    hp = create_hparams("transformer_base_v1", input_vocab_size=32768)
    assert forward_flops(hp, 8, 20, 20) == 8 * forward_flops(hp, 1, 20, 20)


def test_a_classifier_counts_the_encoder_and_one_class_projection():
    """transformer_encoder with a class-label target: no decoder, one pooled row an example."""
    hp = create_hparams(
        "transformer_base_v1",
        "num_hidden_layers=1,hidden_size=4,filter_size=8,num_heads=2",
        input_vocab_size=10,
    )
    hp.add_hparam("class_label_target", True)
    hp.set_hparam("target_vocab_size", 3)
    B, S, d, ff, C = 2, 3, 4, 8, 3
    enc = B * (4 * 2 * S * d * d + 2 * 2 * S * S * d + 2 * 2 * S * d * ff)
    assert forward_flops(hp, B, S, 1) == enc + 2 * B * d * C
