"""``tf.math.top_k`` over a long last axis in two stages, with exactly its results.

Beam search takes the top 2 x beam of beam x vocabulary scores per sentence at every step
(``tensor2tensor/utils/beam_search.py``, ``grow_topk``). On a CPU, TensorFlow's top-k over
32,768 scores per row was ~10 ms a step for a batch of 64, a quarter of a small model's beam
search (``bench/bench_decode_step_profile.py``). Here the row is cut into blocks; the k blocks with
the largest maxima hold the row's top k (a block left out has k blocks before it whose maxima
are at least as large, each with an element that comes first), so top-k runs on the maxima and
then on k blocks only.

The values and indices are ``tf.math.top_k``'s exactly, ties included: equal values come
lower index first. Block maxima that tie are taken lower block first, and the chosen blocks
are put back in index order before the last top-k, so its tie-breaking by position is
tie-breaking by index.
"""

from __future__ import annotations

import tensorflow as tf

BLOCK = 128
MIN_BLOCKS_PER_K = 4  # fewer blocks than this many per wanted element: one plain top-k


def top_k(x: tf.Tensor, k: int, block: int = BLOCK) -> tuple[tf.Tensor, tf.Tensor]:
    """(values, indices) of the ``k`` largest entries of ``x`` [N, n] (static n), best first,
    equal to ``tf.math.top_k(x, k)``."""
    n = x.shape[-1]
    if n is None or x.shape.rank != 2 or n < block * k * MIN_BLOCKS_PER_K:
        return tf.math.top_k(x, k=k)
    blocks = -(-n // block)
    if blocks * block != n:  # pad with the lowest value; padding sits after every real index
        x = tf.pad(x, [[0, 0], [0, blocks * block - n]], constant_values=x.dtype.min)
    grouped = tf.reshape(x, [-1, blocks, block])
    _, best_blocks = tf.math.top_k(tf.reduce_max(grouped, axis=-1), k=k)
    best_blocks = tf.sort(best_blocks, axis=-1)  # index order, for the ties below
    candidates = tf.gather(grouped, best_blocks, batch_dims=1)  # [N, k, block]
    values, position = tf.math.top_k(tf.reshape(candidates, [-1, k * block]), k=k)
    chosen_block = tf.gather(best_blocks, position // block, batch_dims=1)
    return values, chosen_block * block + position % block
