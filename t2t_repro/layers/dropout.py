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

``broadcast_dims`` is T2T's ``dropout_with_broadcast_dims`` (``tensor2tensor/layers/
common_layers.py``): the mask has size 1 along those dimensions (negative ones count from the
end, out-of-range ones are ignored, as there), so one keep/drop decision is shared along them.
With ``rows`` the dimensions are those of the full [B, L, d] tensor the rows come from. Without
broadcast dims nothing changes: the same draws, bit for bit.
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


def next_replica_seed(generator: keras.random.SeedGenerator) -> tf.Tensor:
    """A draw's seed: the generator's next, folded for this replica (``replica_seed``).
    Stateless ops under XLA want int32 seeds; the generator's state is int64."""
    seed = generator.next()
    return replica_seed(tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32))


@keras.saving.register_keras_serializable(package="t2t_repro")
def parse_broadcast_dims(name: str, text: str) -> tuple[int, ...]:
    """T2T's ``common_layers.comma_separated_string_to_integer_list`` of the hparam ``name``
    ("0,1" -> (0, 1); "" -> ()), with a one-line error for what is not an integer."""
    try:
        return tuple(int(i) for i in str(text).split(",") if i)
    except ValueError:
        raise ValueError(
            f"{name}={text!r} is not a comma-separated list of integers (dimensions along "
            "which dropout shares its mask, e.g. '0,1'; '' for none)."
        ) from None


def noise_shape(shape: tf.Tensor, rank: int, broadcast_dims: tuple[int, ...]) -> tf.Tensor:
    """``shape`` (of a rank-``rank`` tensor) with 1 along ``broadcast_dims``, as T2T's
    ``dropout_with_broadcast_dims`` makes its ``noise_shape``."""
    dims = {d + rank if d < 0 else d for d in broadcast_dims}
    return tf.stack([1 if i in dims else shape[i] for i in range(rank)])


def kept_and_scaled(inputs: tf.Tensor, keep: tf.Tensor, scale: tf.Tensor) -> tf.Tensor:
    """``where(keep, inputs * scale, 0)``, whose gradient ``where(keep, dy, 0) * scale`` is
    written out: the kernels and values automatic differentiation gives (``math_grad.py``,
    ``_SelectGradV2`` then ``_MulGrad``), without the broadcasting-gradient ops it adds for
    tensors of unknown batch and length (shapes, ``BroadcastGradientArgs``, sums over no axis,
    reshapes) and the unused gradient of the constant zero: ~14 fewer graph ops a call to
    trace, instantiate and run."""

    @tf.custom_gradient
    def apply(x):
        def grad(dy):
            return tf.where(keep, dy, tf.zeros([], dy.dtype)) * scale

        # A scalar zero, not zeros_like: the same values without writing a tensor of zeros.
        return tf.where(keep, x * scale, tf.zeros([], x.dtype)), grad

    return apply(inputs)


class Dropout(keras.layers.Dropout):
    """``keras.layers.Dropout`` (same arguments, ``broadcast_dims`` for ``noise_shape``) with
    16-bit masks."""

    def __init__(self, rate: float, broadcast_dims: tuple[int, ...] = (), **kwargs) -> None:
        if kwargs.get("noise_shape") is not None:
            raise ValueError("t2t_repro Dropout takes broadcast_dims, not noise_shape")
        super().__init__(rate, **kwargs)
        self.broadcast_dims = tuple(broadcast_dims)
        self._threshold = min(_LEVELS - 1, round(self.rate * _LEVELS))

    def call(self, inputs: tf.Tensor, training: bool = False, rows=None) -> tf.Tensor:
        """``rows`` (a gathering ``layers.pad_remover.PadRemover``): ``inputs`` [N, d] are
        the kept rows of a [B*L, d] tensor; the mask is drawn for that full tensor and its
        rows are kept, so the draws do not depend on the gather."""
        if not training or self.rate == 0:
            return inputs
        if self.rate >= 1:
            return tf.zeros_like(inputs)
        seed = self._next_seed()
        if self.broadcast_dims:
            keep = self._broadcast_mask(inputs, seed, rows)
        else:
            if rows is None:
                shape = tf.shape(inputs)
            else:
                shape = tf.stack([tf.cast(rows.full_rows, tf.int32), inputs.shape[-1]])
            keep = self._mask(shape, seed)
        if rows is not None:
            keep = rows.remove(keep)
        return kept_and_scaled(inputs, keep, tf.cast(1.0 / (1.0 - self.rate), inputs.dtype))

    def _next_seed(self) -> tf.Tensor:
        return next_replica_seed(self.seed_generator)

    def _mask(self, shape: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        """A bool keep mask of ``shape``, each element from 16 random bits."""
        size = tf.reduce_prod(shape)
        bits = tf.random.stateless_uniform(
            [(size + 1) // 2], seed=seed, minval=None, maxval=None, dtype=tf.uint32
        )
        halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
        return tf.reshape(halves >= tf.constant(self._threshold, tf.uint16), shape)

    def _broadcast_mask(self, inputs: tf.Tensor, seed: tf.Tensor, rows) -> tf.Tensor:
        """The mask drawn at the noise shape: as it is (``tf.where`` broadcasts it), or spread
        over the rows' full [B, L, d] shape, whose rows ``call`` then keeps."""
        if rows is None:
            shape, rank = tf.shape(inputs), inputs.shape.rank
        else:
            shape, rank = tf.concat([rows.batch_shape, [inputs.shape[-1]]], 0), 3
        keep = self._mask(noise_shape(shape, rank, self.broadcast_dims), seed)
        return keep if rows is None else tf.broadcast_to(keep, shape)

    def get_config(self) -> dict:
        config = super().get_config()
        if self.broadcast_dims:
            config.update(broadcast_dims=list(self.broadcast_dims))
        return config


class SymbolDropout(Dropout):
    """T2T's ``symbol_dropout``: in training, each id becomes PAD (0) with probability
    ``rate``, before the embedding looks it up, so its row is zero (``layers/modalities.py``,
    ``_symbol_bottom_simple``: ``dropout_no_scaling`` of the ids). Nothing is rescaled."""

    def call(self, ids: tf.Tensor, training: bool = False) -> tf.Tensor:
        if not training or self.rate == 0:
            return ids
        keep = self._mask(tf.shape(ids), self._next_seed())
        return tf.where(keep, ids, tf.zeros([], ids.dtype))
