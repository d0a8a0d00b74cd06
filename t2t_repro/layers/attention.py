"""Multi-head dot-product attention as T2T computes it
(``tensor2tensor/layers/common_attention.py``, ``multihead_attention``).

Separate bias-free ``q``, ``k``, ``v`` and ``output_transform`` projections, Q scaled by
(d_k/h)^-0.5 before the matmul, additive -1e9 biases for padding and the future, softmax in
float32, then dropout on the weights. Incremental decoding passes a ``cache`` of keys/values,
as keras-hub's ``CachedMultiHeadAttention`` does: a fixed-size self-attention buffer written
one position per step (static shapes, XLA-compilable), or the encoder's keys/values,
computed once per sentence (T2T's ``transformer.fast_decode``).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.layers.dropout import Dropout, next_replica_seed
from t2t_repro.layers.hard_attention import MAX_UNIFORM, MIN_UNIFORM, gumbel_noise, harden
from t2t_repro.layers.initializers import GLOROT_UNIFORM, AttentionComponentNormal, DrawnInShape
from t2t_repro.layers.relative_positions import RelativePositions

NEG_INF = -1e9


def attention_bias_ignore_padding(ids: tf.Tensor) -> tf.Tensor:
    """[B, L] ids -> [B, 1, 1, L] bias, -1e9 where the id is PAD (0)."""
    padding = tf.cast(tf.equal(ids, 0), tf.float32)
    return (padding * NEG_INF)[:, None, None, :]


def attention_bias_lower_triangle(length) -> tf.Tensor:
    """[1, 1, L, L] causal bias: -1e9 above the diagonal (future positions)."""
    band = tf.linalg.band_part(tf.ones([length, length]), -1, 0)
    return (NEG_INF * (1.0 - band))[None, None]


def attention_bias_same_segment(query_segment: tf.Tensor, memory_segment: tf.Tensor) -> tf.Tensor:
    """[B, Lq] and [B, Lk] segment ids of a packed batch -> [B, 1, Lq, Lk] bias, -1e9 where
    the two positions belong to different segments (T2T's ``attention_bias_same_segment``,
    ``layers/common_attention.py``): packed examples do not see each other."""
    different = tf.not_equal(query_segment[:, :, None], memory_segment[:, None, :])
    return (tf.cast(different, tf.float32) * NEG_INF)[:, None]


def attention_bias_after(index, length) -> tf.Tensor:
    """[1, 1, 1, L] bias, -1e9 at positions after ``index`` (cache slots not written yet)."""
    return (tf.cast(tf.range(length) > index, tf.float32) * NEG_INF)[None, None, None, :]


def buffer_length(buffer: tf.Tensor):
    """Positions in a [B, h, L, d] cache buffer: static where known (XLA), else at run time
    (an exported model's decode length is an input)."""
    return buffer.shape[2] if buffer.shape[2] is not None else tf.shape(buffer)[2]


def position_indices(buffer: tf.Tensor, index) -> tf.Tensor:
    """[B, h, 3] indices (b, head, ``index``) of every row's position ``index`` in a
    [B, h, L, d] cache buffer, for ``write_position``: built once for a step's keys and values
    from one Unpack of the shape and a range (~15 graph ops; a meshgrid took 45 a buffer)."""
    batch, heads, _, _ = tf.unstack(tf.shape(buffer), num=4)
    rows = batch * heads
    flat = tf.range(rows)
    at = [flat // heads, flat % heads, tf.fill(tf.stack([rows]), tf.cast(index, tf.int32))]
    return tf.reshape(tf.stack(at, -1), tf.stack([batch, heads, 3]))


def write_position(buffer: tf.Tensor, values: tf.Tensor, at: tf.Tensor) -> tf.Tensor:
    """``buffer`` [B, h, L, d] with the positions ``at`` (``position_indices``) replaced by
    ``values`` [B, h, 1, d].

    A scatter of the B*h rows at one position: the buffer keeps its static shape (XLA), L may
    be known only at run time, and without XLA TensorFlow can update the buffer in place.
    The one-hot blend it replaces made three passes over the buffer (17.4 vs 24.5
    sentences/s without XLA, ``bench/bench_decode_forced.py``); the values are the same.
    """
    return tf.tensor_scatter_nd_update(buffer, at, tf.squeeze(values, 2))


def heads_matmul(x: tf.Tensor, y: tf.Tensor, transpose_b: bool = False) -> tf.Tensor:
    """``tf.matmul(x, y, transpose_b=...)`` of [B, H, ., .] tensors whose batch dimensions are
    the same, with the gradient automatic differentiation gives (``math_grad.py``,
    ``_BatchMatMulV2``: the same two matmuls) without the run-time reduction over broadcast
    batch dimensions it adds when B is unknown (shapes, slices, ``BroadcastGradientArgs``,
    sums over no axis, reshapes: ~13 graph ops a matmul). For training graphs."""

    @tf.custom_gradient
    def product(x, y):
        def grad(dz):
            if transpose_b:
                return (
                    tf.matmul(dz, y, grad_a=True),
                    tf.matmul(dz, x, adjoint_a=True, grad_b=True),
                )
            return (
                tf.matmul(dz, y, adjoint_b=True, grad_a=True),
                tf.matmul(x, dz, adjoint_a=True, grad_b=True),
            )

        return tf.matmul(x, y, transpose_b=transpose_b), grad

    return product(x, y)


def split_heads(x: tf.Tensor, num_heads: int) -> tf.Tensor:
    """[B, L, D] -> [B, h, L, D/h]. The dynamic dims come from one Unpack of the shape, not a
    strided slice apiece (each with three constants): 8 graph ops instead of 15, traced in
    every attention layer's queries, keys and values."""
    batch, length, _ = tf.unstack(tf.shape(x), num=3)
    x = tf.reshape(x, tf.stack([batch, length, num_heads, x.shape[-1] // num_heads]))
    return tf.transpose(x, [0, 2, 1, 3])


def combine_heads(x: tf.Tensor) -> tf.Tensor:
    """[B, h, L, d] -> [B, L, h*d] (``split_heads``' inverse; the shape unpacked as there)."""
    batch, _, length, _ = tf.unstack(tf.shape(x), num=4)
    x = tf.transpose(x, [0, 2, 1, 3])
    return tf.reshape(x, tf.stack([batch, length, x.shape[2] * x.shape[3]]))


def combine_heads_flat(x: tf.Tensor) -> tf.Tensor:
    """[B, h, L, d] -> [B*L, h*d]: ``combine_heads``' rows, flat (for a ``PadRemover``'s
    ``remove``), in one reshape."""
    x = tf.transpose(x, [0, 2, 1, 3])
    return tf.reshape(x, [-1, x.shape[2] * x.shape[3]])


@keras.saving.register_keras_serializable(package="t2t_repro")
class MultiHeadAttention(keras.layers.Layer):
    """Attention from ``query`` [B, Lq, d] over ``memory`` [B, Lk, d] (self-attention if None).

    ``cache`` is a (keys, values) pair of [B, h, L, d/h] tensors. With ``cache_update_index``
    the query's own keys/values (one position) are written at that index and the query
    attends to the whole buffer, slots after the index masked: the decoder's self-attention
    step. Without it the cache is used as it is: the encoder's keys/values from
    ``compute_key_value``. With a cache, ``call`` returns ``(output, cache)``.

    ``max_relative_position`` > 0 makes it T2T's ``dot_product_relative`` self-attention
    (``layers/relative_positions.py``); 0 is T2T's ``dot_product``. ``hard_attention_k`` > 0:
    T2T's hard attention, with ``gumbel_noise_weight`` (``layers/hard_attention.py``).
    ``vars_3d``: T2T's ``attention_variables_3d`` (``layers/initializers.py``): q, k, v and the
    output drawn as T2T's 3-D variables, and no run-time query scaling (it is in q's draw).
    """

    def __init__(
        self,
        num_heads: int,
        key_channels: int,
        value_channels: int,
        output_channels: int,
        dropout: float = 0.0,
        max_relative_position: int = 0,
        dropout_broadcast_dims: tuple[int, ...] = (),
        kernel_initializer: str | dict = GLOROT_UNIFORM,
        hard_attention_k: int = 0,
        gumbel_noise_weight: float = 0.0,
        vars_3d: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        for name, channels in (("key", key_channels), ("value", value_channels)):
            if channels % num_heads:
                raise ValueError(
                    f"{name} channels ({channels}) must be divisible by num_heads ({num_heads})."
                )
        self.num_heads = num_heads
        self.key_channels = key_channels
        self.value_channels = value_channels
        self.output_channels = output_channels
        self.dropout = dropout
        # T2T's default variable initializer (layers/initializers.py).
        self.kernel_initializer = kernel_initializer
        self.vars_3d = vars_3d
        dense = lambda units, name, initializer=kernel_initializer: keras.layers.Dense(  # noqa: E731
            units, use_bias=False, kernel_initializer=initializer, name=name
        )
        if vars_3d:  # T2T's common_attention.py, compute_attention_component, multihead_attention
            self.q = dense(key_channels, "q", AttentionComponentNormal(num_heads, query=True))
            self.k = dense(key_channels, "k", AttentionComponentNormal(num_heads))
            self.v = dense(value_channels, "v", AttentionComponentNormal(num_heads))
            shape = (num_heads, value_channels // num_heads, output_channels)
            initializer = DrawnInShape(kernel_initializer, shape)
            self.output_transform = dense(output_channels, "output_transform", initializer)
        else:
            self.q = dense(key_channels, "q")
            self.k = dense(key_channels, "k")
            self.v = dense(value_channels, "v")
            self.output_transform = dense(output_channels, "output_transform")
        # T2T's attention_dropout_broadcast_dims, on the [B, heads, Lq, Lk] weights
        # (common_attention.dot_product_attention).
        self.dropout_broadcast_dims = tuple(dropout_broadcast_dims)
        self.weights_dropout = Dropout(dropout, self.dropout_broadcast_dims)
        self.max_relative_position = max_relative_position
        self.hard_attention_k = hard_attention_k
        # T2T adds noise only for a weight > 0, and hardens only for k > 0
        self.gumbel_noise_weight = max(gumbel_noise_weight, 0.0) if hard_attention_k > 0 else 0.0
        if self.gumbel_noise_weight > 0:  # its draws' state in the checkpoint, as dropout's
            self.noise_seeds = keras.random.SeedGenerator(name="gumbel_noise")
        self.relative = None
        if max_relative_position:
            if key_channels != value_channels:
                raise ValueError(
                    "relative self-attention needs equal key and value channels "
                    f"({key_channels} vs {value_channels}): T2T gives both tables the key depth."
                )
            self.relative = RelativePositions(
                max_relative_position,
                key_channels // num_heads,
                kernel_initializer,
                name="dot_product_attention_relative",
            )

    def build(self, query_shape, memory_shape=None) -> None:
        memory_shape = memory_shape or query_shape
        self.q.build(query_shape)
        self.k.build(memory_shape)
        self.v.build(memory_shape)
        self.output_transform.build(tuple(query_shape[:-1]) + (self.value_channels,))
        if self.vars_3d:  # T2T's own shapes, for what reads them (t2t-import, Adafactor)
            heads = self.num_heads
            for dense in (self.q, self.k, self.v):
                rows, columns = dense.kernel.shape
                dense.kernel.t2t_shape = (rows, heads, columns // heads)
            rows, columns = self.output_transform.kernel.shape
            self.output_transform.kernel.t2t_shape = (heads, rows // heads, columns)
        if self.relative is not None:
            self.relative.build()
        self.built = True

    def compute_key_value(self, memory: tf.Tensor, rows=None) -> tuple[tf.Tensor, tf.Tensor]:
        """Projected keys and values split into heads: 2 x [B, h, Lk, d/h]. ``rows``: the
        ``PadRemover`` whose kept rows ``memory`` [N, d] holds (zeros elsewhere)."""
        return self._heads(self.k, memory, rows), self._heads(self.v, memory, rows)

    def _heads(self, dense: keras.layers.Dense, x: tf.Tensor, rows) -> tf.Tensor:
        y = dense(x)
        if rows is None:
            return split_heads(y, self.num_heads)
        return tf.transpose(rows.restore_split(y, self.num_heads), [0, 2, 1, 3])

    def empty_cache(self, batch_size, length: int, dtype) -> tuple[tf.Tensor, tf.Tensor]:
        """Zero self-attention buffers for ``length`` positions: 2 x [B, h, length, d/h]."""
        zeros = lambda channels: tf.zeros(  # noqa: E731
            [batch_size, self.num_heads, length, channels // self.num_heads], dtype
        )
        return zeros(self.key_channels), zeros(self.value_channels)

    def call(
        self,
        query: tf.Tensor,
        memory: tf.Tensor | None = None,
        bias: tf.Tensor | None = None,
        cache: tuple[tf.Tensor, tf.Tensor] | None = None,
        cache_update_index=None,
        training: bool = False,
        return_weights: bool = False,
        rows=None,
        memory_rows=None,
    ):
        """``rows`` / ``memory_rows`` (training): ``query`` / ``memory`` are the kept rows
        [N, d] of a ``layers.pad_remover.PadRemover`` (positions no kept position depends on
        are left out); the projections run on those rows, the attention itself on [B, L]
        with zeros at the left-out positions, and the output comes back as rows [N, d]."""
        if not self.built:
            self.build(query.shape, None if memory is None else memory.shape)
        if return_weights and cache is not None:
            raise ValueError("return_weights is for the full pass; it cannot be used with a cache.")
        q = self._heads(self.q, query, rows)
        if not self.vars_3d:  # with T2T's vars_3d the scale is in q's weights (multihead_attention)
            q = q * tf.cast((self.key_channels // self.num_heads) ** -0.5, q.dtype)
        absent = None  # cache slots T2T's attention does not have (hard attention leaves them)
        if cache is None:
            if memory is None:
                k, v = self.compute_key_value(query, rows)
            else:
                k, v = self.compute_key_value(memory, memory_rows)
        elif cache_update_index is None:
            k, v = cache
        else:
            k_new, v_new = self.compute_key_value(query if memory is None else memory)
            at = position_indices(cache[0], cache_update_index)  # the keys' and values' rows
            k = write_position(cache[0], k_new, at)
            v = write_position(cache[1], v_new, at)
            unwritten = attention_bias_after(cache_update_index, buffer_length(k))
            bias = unwritten if bias is None else bias + unwritten
            absent = unwritten < 0
        # In training, each product's operands have one reader: their gradients need no
        # sum (with relative positions q and the weights have two: automatic differentiation's).
        written_out = training and cache is None and self.relative is None
        matmul = heads_matmul if written_out else tf.matmul
        logits = matmul(q, k, transpose_b=True)
        if self.relative is not None:
            positions = self.relative.positions(tf.shape(q)[2], tf.shape(k)[2], cache_update_index)
            logits += self.relative.key_logits(q, positions)
        logits = tf.cast(logits, tf.float32)
        if bias is not None:  # Keras casts float inputs to the compute dtype (mixed precision).
            bias = tf.cast(bias, tf.float32)
            if self.compute_dtype == "float16":  # -1e9 became -inf there: T2T's float16
                bias = tf.maximum(bias, NEG_INF)  # bias is finite (large_compatible_negative),
            logits += bias  # so a row with every key masked (packed rows) is no NaN
        weights = tf.nn.softmax(logits)
        if self.hard_attention_k > 0:
            weights = harden(weights, self.hard_attention_k, self._noise(weights), absent)
        dropped = self.weights_dropout(tf.cast(weights, v.dtype), training=training)
        attended = matmul(dropped, v)
        if self.relative is not None:
            attended += self.relative.weighted_values(dropped, positions)
        if rows is None:
            output = self.output_transform(combine_heads(attended))
        else:
            output = self.output_transform(rows.remove(combine_heads_flat(attended)))
        if cache is not None:
            return output, (k, v)
        return (output, weights) if return_weights else output

    def _noise(self, weights: tf.Tensor) -> tf.Tensor | None:
        """T2T's Gumbel noise of the weights' shape (in every mode, as T2T's), or None."""
        if not self.gumbel_noise_weight:
            return None
        uniform = self._uniform(tf.shape(weights), next_replica_seed(self.noise_seeds))
        return gumbel_noise(uniform, self.gumbel_noise_weight)

    def _uniform(self, shape: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        return tf.random.stateless_uniform(shape, seed, minval=MIN_UNIFORM, maxval=MAX_UNIFORM)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            key_channels=self.key_channels,
            value_channels=self.value_channels,
            output_channels=self.output_channels,
            dropout=self.dropout,
            max_relative_position=self.max_relative_position,
        )
        if self.dropout_broadcast_dims:
            config.update(dropout_broadcast_dims=list(self.dropout_broadcast_dims))
        if self.kernel_initializer != GLOROT_UNIFORM:
            config.update(kernel_initializer=self.kernel_initializer)
        if self.hard_attention_k:
            config.update(
                hard_attention_k=self.hard_attention_k,
                gumbel_noise_weight=self.gumbel_noise_weight,
            )
        if self.vars_3d:
            config.update(vars_3d=True)
        return config
