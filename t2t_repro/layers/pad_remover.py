"""T2T's pad remover: feed-forward layers run on real tokens only.

As ``tensor2tensor/utils/expert_utils.py, PadRemover`` used by
``layers/transformer_layers.py, transformer_ffn_layer``: the rows of the flattened
[B*L, d] batch that are not padding are gathered, the FFN runs on them, and the result is
scattered back, so the FFN output at padding positions is exactly 0 (T2T's encoder outputs
at padding positions are therefore ``LN(x)`` of the residual stream, not ``LN(x + FFN(x))``).
Real positions are unaffected; padding is masked out of every attention, so logits do not
change either.

The decoder uses it in training only (T2T's decoder has none): there the rows after a
target's last real token are dropped (``after_last_token``). A later position never feeds an
earlier one (causal attention), so every real position's output, and the loss, is unchanged,
while the logits at the trailing padding, which no loss counts, are not computed at all.

The FFN's ReLU dropout draws its mask for the full [B*L, filter] shape and keeps the gathered
rows (``rows`` of ``layers.dropout.Dropout``), so training draws the same masks with and
without the gather: a training step's loss is the same to the bit (the weight gradients
sum fewer zero rows and may differ in their last bits).

Under XLA the gather is padded back to the full batch anyway (shapes are static): there the
encoder's FFN runs on every row and its output is multiplied by 0 at padding (the same values
as the gather) and the decoder's runs on every row. (T2T skips the pad remover under XLA
altogether; we keep the zeros so outputs do not depend on compilation.)
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import control_flow_util


def _in_xla() -> bool:
    """T2T's ``common_layers.is_xla_compiled``: inside a jit-compiled function."""
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


class PadRemover:
    """Built once per stack call from a [B, L] mask of the rows to keep."""

    def __init__(self, keep: tf.Tensor, gather: bool = True) -> None:
        self.gather = gather and not _in_xla()
        if self.gather:
            self.indices = tf.where(tf.reshape(keep, [-1]))
            self.full_rows = tf.size(keep, out_type=tf.int64)
        else:
            self.mask = keep[:, :, None]

    @classmethod
    def from_padding_bias(cls, padding_bias: tf.Tensor) -> PadRemover:
        """The encoder's: keeps the real tokens of a [B, 1, 1, L] bias (-1e9 at padding)."""
        # T2T's attention_bias_to_padding: a bias below -1 marks padding.
        return cls(padding_bias[:, 0, 0, :] >= -1.0)

    @classmethod
    def after_last_token(cls, ids: tf.Tensor) -> PadRemover | None:
        """The decoder's (training): keeps each row of [B, L] ``ids`` up to its last
        non-PAD id, so that every position a real one attends to is kept. None under XLA."""
        if _in_xla():
            return None
        positions = tf.range(tf.shape(ids)[1])[None, :]
        last = tf.reduce_max(tf.where(tf.not_equal(ids, 0), positions, -1), axis=1)
        return cls(positions <= last[:, None])

    def remove(self, x: tf.Tensor) -> tf.Tensor:
        """[B, L, d] or [B*L, d] -> [N, d] kept rows (gather mode); unchanged otherwise."""
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
