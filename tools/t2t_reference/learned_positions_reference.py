"""A tiny T2T 1.15.7 train dir with learned positions (``pos=emb``), and T2T's outputs on it.

Companion of ``make_t2t_reference.py`` (``--only=learned_positions``), run in T2T's virtualenv
after the shim is installed. T2T's ``transformer_tiny`` with ``pos=emb``: its two tables,
``body/inputs_positional_embedding`` and ``body/targets_positional_embedding``, of
``max_length=5`` rows each (``layers/common_attention.py``, ``add_positional_embedding``),
so the sources (7 positions), targets (6) and decodes (up to 15) run past them, where T2T adds
no signal; hidden 16, filter 32, 2 heads, 2 layers, one shared embedding of 13 rows in 2
shards. ``make_t2t_reference.py`` trains and reads it back as the relative-attention reference
(``relative_reference.write_trained``): 300 Adam steps on reversing random sequences, then
EVAL logits, greedy, beam-3 and beam-3 all-beams decodes (T2T's cached ``_fast_decode``).
"""

TRAIN_DIR = "t2t_learned_positions_train_dir"
REFERENCE = "t2t_1.15.7_learned_positions_decodes.npz"
MAX_LENGTH = 5


def tiny_learned_positions_hparams(transformer):
    """T2T's transformer_tiny with pos=emb, at the sizes above."""
    hparams = transformer.transformer_tiny()
    hparams.hidden_size, hparams.filter_size, hparams.num_heads = 16, 32, 2
    hparams.num_hidden_layers = 2
    hparams.pos = "emb"
    hparams.max_length = MAX_LENGTH
    hparams.symbol_modality_num_shards = 2
    return hparams
