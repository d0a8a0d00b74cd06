"""Dropout whose mask costs half the random bits of ``keras.layers.Dropout``.

Why: on CPU the Philox generator behind Keras' dropout (32 random bits per element) took
about 5% of a ``transformer_base`` training step under XLA. Here each 32 random bits decide
two elements, 16 bits each, so the drop probability is ``round(rate * 2**16) / 2**16``:
within 2**-17 of ``rate`` (0.1 becomes 0.100006). Kept elements are scaled by
``1 / (1 - rate)`` as in ``tf.nn.dropout`` (T2T's dropout). The seed comes from the layer's
``SeedGenerator``, as in Keras, so checkpoints keep the RNG state and a resumed run draws
the same masks.

Under ``tf.distribute`` the generator is a mirrored variable: every replica holds the same
state, so each replica folds its global id (``replica_id_in_sync_group``, which counts the
replicas of every worker under MultiWorkerMirroredStrategy) into the seed and draws its own
masks, as T2T's data-parallel shards did (each shard its own ``tf.nn.dropout`` draw). Replica
0, and so any one-device run, keeps the unfolded seed: its masks are bit-identical to before.
The id is a constant of each replica's trace: with several local devices ``tf.function`` (also
an XLA-compiled step) is traced once per device (``distribute_lib``:
``_retrace_functions_for_each_device``), so no replica reuses another's id.
"""

from __future__ import annotations

import keras
import tensorflow as tf

_LEVELS = 1 << 16


def replica_seed(seed: tf.Tensor) -> tf.Tensor:
    """``seed`` (int32 [2]: layer key, counter) for this replica: unchanged on replica 0 (and
    outside a strategy); on replica r the key becomes a hash of (key, r) and the counter stays,
    so each replica's masks are a stream of their own, deterministic from the run's seed."""
    ctx = tf.distribute.get_replica_context()
    if ctx is None:  # Cross-replica context (e.g. building under strategy.scope()).
        return seed
    replica = ctx.replica_id_in_sync_group
    static = tf.get_static_value(replica)
    if static is not None and static == 0:
        return seed
    key = tf.random.stateless_uniform(
        [],
        seed=tf.stack([seed[0], tf.cast(replica, tf.int32)]),
        minval=None,
        maxval=None,
        dtype=tf.int32,
    )
    folded = tf.stack([key, seed[1]])
    return folded if static is not None else tf.where(tf.equal(replica, 0), seed, folded)


@keras.saving.register_keras_serializable(package="t2t_repro")
class Dropout(keras.layers.Dropout):
    """``keras.layers.Dropout`` (same arguments, no ``noise_shape``) with 16-bit masks."""

    def __init__(self, rate: float, **kwargs) -> None:
        if kwargs.get("noise_shape") is not None:
            raise ValueError("t2t_repro Dropout does not support noise_shape")
        super().__init__(rate, **kwargs)
        self._threshold = min(_LEVELS - 1, round(self.rate * _LEVELS))

    def call(self, inputs: tf.Tensor, training: bool = False, rows=None) -> tf.Tensor:
        """``rows`` (a gathering ``layers.pad_remover.PadRemover``): ``inputs`` [N, d] are
        the kept rows of a [B*L, d] tensor; the mask is drawn for that full tensor and its
        rows are kept, so the draws do not depend on the gather."""
        if not training or self.rate == 0:
            return inputs
        if self.rate >= 1:
            return tf.zeros_like(inputs)
        seed = self.seed_generator.next()
        # Stateless ops under XLA want int32 seeds; the generator's state is int64.
        seed = replica_seed(tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32))
        if rows is None:
            shape = tf.shape(inputs)
        else:
            shape = tf.stack([tf.cast(rows.full_rows, tf.int32), inputs.shape[-1]])
        size = tf.reduce_prod(shape)
        bits = tf.random.stateless_uniform(
            [(size + 1) // 2], seed=seed, minval=None, maxval=None, dtype=tf.uint32
        )
        halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
        keep = tf.reshape(halves >= tf.constant(self._threshold, tf.uint16), shape)
        if rows is not None:
            keep = rows.remove(keep)
        scale = tf.cast(1.0 / (1.0 - self.rate), inputs.dtype)
        # A scalar zero, not zeros_like: the same values without writing a tensor of zeros.
        return tf.where(keep, inputs * scale, tf.zeros([], inputs.dtype))
