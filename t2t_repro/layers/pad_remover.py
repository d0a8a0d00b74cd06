"""T2T's pad remover, and the rows a training pass runs on.

As ``tensor2tensor/utils/expert_utils.py, PadRemover`` used by
``layers/transformer_layers.py, transformer_ffn_layer``: the rows of the flattened
[B*L, d] batch that are not padding are gathered, the FFN runs on them, and the result is
scattered back, so the FFN output at padding positions is exactly 0 (T2T's encoder outputs
at padding positions are therefore ``LN(x)`` of the residual stream, not ``LN(x + FFN(x))``).
Real positions are unaffected; padding is masked out of every attention, so logits do not
change either. That is the encoder outside training.

In training (``_Stack.packs_rows``) the same object goes further: each stack runs on the kept
rows from its first layer to its final layer norm. Every position-wise step (layer norms,
dropout, residual adds, the attention projections, the FFN) sees [N, d] rows; only the
attention itself works on [B, L], its queries, keys and values put back with zeros at the
left-out positions. The encoder keeps its real tokens (padding is masked as a key, and its
outputs are 0 at padding, which every attention over them masks); the decoder keeps each
target's positions up to its last token (``after_last_token``: a later position never feeds an
earlier one, and a PAD before a real token is kept). Dropout draws its mask for the full
[B*L, d] shape and keeps the rows (``rows`` of ``layers.dropout.Dropout``), so a training step
draws the same masks and computes the same loss, to the bit, as the full computation; the
weight gradients sum fewer zero rows (equal to float32 rounding; on the peers' benchmark batch
all but the embedding table's were bit-identical). Why: in the peers' benchmark batch 13% of
the positions are padding, so 13% of every position-wise matmul was wasted.

Under XLA the gather is padded back to the full batch anyway (shapes are static): there the
encoder's FFN runs on every row and its output is multiplied by 0 at padding (the same values
as the gather), and nothing else is skipped. (T2T skips the pad remover under XLA altogether;
we keep the zeros so outputs do not depend on compilation.)
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import control_flow_util


def in_xla() -> bool:
    """T2T's ``common_layers.is_xla_compiled``: inside a jit-compiled function."""
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


class PadRemover:
    """Built once per stack call from a [B, L] mask of the rows to keep."""

    def __init__(self, keep: tf.Tensor, gather: bool = True) -> None:
        self.gather = gather and not in_xla()
        if self.gather:
            flat_keep = tf.reshape(keep, [-1])
            self.indices = tf.where(flat_keep)  # [N, 1]: each kept row's position
            # Each position's row among the kept ones (0 where removed), and whether kept.
            self.inverse = tf.maximum(tf.cumsum(tf.cast(flat_keep, tf.int32)) - 1, 0)
            self.kept = flat_keep[:, None]
            self.full_rows = tf.size(keep, out_type=tf.int64)
        else:
            self.mask = keep[:, :, None]
        self.batch_shape = tf.shape(keep)  # [B, L]
        self._split_shapes: dict = {}  # (parts, width) -> [B, L, parts, width]

    @classmethod
    def from_padding_bias(cls, padding_bias: tf.Tensor) -> PadRemover:
        """The encoder's: keeps the real tokens of a [B, 1, 1, L] bias (-1e9 at padding)."""
        # T2T's attention_bias_to_padding: a bias below -1 marks padding.
        return cls(padding_bias[:, 0, 0, :] >= -1.0)

    @classmethod
    def after_last_token(cls, ids: tf.Tensor) -> PadRemover | None:
        """The decoder's (training): keeps each row of [B, L] ``ids`` up to its last
        non-PAD id, so that every position a real one attends to is kept. None under XLA."""
        if in_xla():
            return None
        positions = tf.range(tf.shape(ids)[1])[None, :]
        last = tf.reduce_max(tf.where(tf.not_equal(ids, 0), positions, -1), axis=1)
        return cls(positions <= last[:, None])

    def remove(self, x: tf.Tensor) -> tf.Tensor:
        """[B, L, d] or [B*L, d] -> [N, d] kept rows (gather mode); unchanged otherwise."""
        if not self.gather:
            return x
        flat = x if x.shape.rank == 2 else tf.reshape(x, [-1, x.shape[-1]])
        if not flat.dtype.is_floating:  # A dropout mask: no gradient.
            return tf.gather_nd(flat, self.indices)
        return self._remove_rows(flat)

    def restore(self, y: tf.Tensor, like: tf.Tensor | None = None) -> tf.Tensor:
        """Kept rows [N, d] back in the [B, L, d] shape, zeros at the removed positions (in
        mask mode: ``y`` [B, L, d], zeroed there)."""
        if not self.gather:
            return y * tf.cast(self.mask, y.dtype)
        flat = self._restore_rows(y)
        return tf.reshape(flat, tf.concat([self.batch_shape, [y.shape[-1]]], 0))

    def restore_split(self, y: tf.Tensor, parts: int) -> tf.Tensor:
        """Kept rows [N, D] back as [B, L, parts, D/parts] (``restore`` then a reshape of its
        last axis, in one reshape: the same values; attention heads' shape, built once per
        stack for its queries, keys and values; in mask mode ``y`` is [B, L, D])."""
        key = (parts, y.shape[-1] // parts)
        if key not in self._split_shapes:
            batch, length = tf.unstack(self.batch_shape, num=2)
            self._split_shapes[key] = tf.stack([batch, length, *key])
        restored = self._restore_rows(y) if self.gather else self.restore(y)
        return tf.reshape(restored, self._split_shapes[key])

    # The two moves and their gradients, each the other's: every row is copied, nothing is
    # summed, so values and gradients are exact. Spreading with a gather and a select took
    # 1.1 ms where ``scatter_nd`` took 1.6 and a gather's own gradient (an unsorted segment
    # sum) 2.2, for 3,565 of 4,096 rows of 512 (AMD EPYC, one core).
    def _spread(self, rows: tf.Tensor) -> tf.Tensor:
        """[N, d] kept rows -> [B*L, d], zeros at the removed positions."""
        return tf.where(self.kept, tf.gather(rows, self.inverse), tf.zeros([], rows.dtype))

    def _remove_rows(self, flat: tf.Tensor) -> tf.Tensor:
        @tf.custom_gradient
        def remove(flat):
            return tf.gather_nd(flat, self.indices), self._spread

        return remove(flat)

    def _restore_rows(self, rows: tf.Tensor) -> tf.Tensor:
        @tf.custom_gradient
        def restore(rows):
            return self._spread(rows), lambda grad: tf.gather_nd(grad, self.indices)

        return restore(rows)
