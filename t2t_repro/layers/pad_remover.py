"""T2T's pad remover: the encoder's feed-forward layers run on real tokens only.

As ``tensor2tensor/utils/expert_utils.py, PadRemover`` used by
``layers/transformer_layers.py, transformer_ffn_layer``: the rows of the flattened
[B*L, d] batch that are not padding are gathered, the FFN runs on them, and the result is
scattered back, so the FFN output at padding positions is exactly 0 (T2T's encoder outputs
at padding positions are therefore ``LN(x)`` of the residual stream, not ``LN(x + FFN(x))``).
Real positions are unaffected; padding is masked out of every attention, so logits do not
change either.

Where the gather is used: only outside training and outside XLA. In training on CPU the
gather/scatter made the encoder's forward + backward about 2x slower (gradients of
gather_nd/scatter_nd; bench/results/pad_remover_cpu_gather_in_training.json), and under XLA the
gather is padded back to the full batch anyway. There the FFN runs on every row and its
output is multiplied by 0 at padding: the same values, and the same dropout draws as without
the pad remover. (T2T skips the pad remover under XLA altogether; we keep the zeros so
outputs do not depend on compilation.)
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import control_flow_util


def _in_xla() -> bool:
    """T2T's ``common_layers.is_xla_compiled``: inside a jit-compiled function."""
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


class PadRemover:
    """Built once per encoder call from its padding bias [B, 1, 1, L] (-1e9 at padding)."""

    def __init__(self, padding_bias: tf.Tensor, gather: bool = True) -> None:
        # T2T's attention_bias_to_padding: a bias below -1 marks padding.
        nonpadding = padding_bias[:, 0, 0, :] >= -1.0
        self.gather = gather and not _in_xla()
        if self.gather:
            self.indices = tf.where(tf.reshape(nonpadding, [-1]))
        else:
            self.mask = nonpadding[:, :, None]

    def remove(self, x: tf.Tensor) -> tf.Tensor:
        """[B, L, d] -> [N, d] real rows (gather mode); unchanged in mask mode."""
        if not self.gather:
            return x
        return tf.gather_nd(tf.reshape(x, [-1, x.shape[-1]]), self.indices)

    def restore(self, y: tf.Tensor, like: tf.Tensor) -> tf.Tensor:
        """The FFN output back in ``like``'s [B, L, d] shape, zeros at padding."""
        if not self.gather:
            return y * tf.cast(self.mask, y.dtype)
        shape = tf.shape(like, out_type=tf.int64)
        flat = tf.scatter_nd(self.indices, y, [shape[0] * shape[1], y.shape[-1]])
        return tf.reshape(flat, tf.concat([tf.shape(like)[:2], [y.shape[-1]]], 0))
