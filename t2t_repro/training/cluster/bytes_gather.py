"""One byte string from every worker of a cluster, in worker order, by one collective.

Why its own module: its two users are the start-up handshake (``startup_handshake.py``: what
each worker restored and was asked) and the workers' input positions saved in the chief's
checkpoint (``WorkerPositions``, ``loop/input_feed.py``); it is the cluster's, not the input's.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class BytesGather:
    """One byte string from every worker, in worker order, by one collective: each worker's
    bytes go as int32 words in one uneven ``all_gather`` (local replica 0 of each worker sends
    them, the others nothing), their lengths in a second one.

    ``gather(data)``: every worker's ``data``, in worker order (all workers call it)."""

    def __init__(self, strategy: tf.distribute.Strategy, workers: int) -> None:
        self.strategy = strategy
        self.local_replicas = strategy.num_replicas_in_sync // workers

    def __call__(self, data: bytes) -> list[bytes]:
        padded = np.frombuffer(data + b"\0" * (-len(data) % 4), dtype=np.int32)
        words, sizes = (
            self.strategy.experimental_local_results(t)[0].numpy()
            for t in self._all_gather(tf.constant(padded), tf.constant([len(data)]))
        )
        joined, found, offset = words.tobytes(), [], 0
        for size in sizes[:: self.local_replicas]:  # local replica 0 of each worker sent it
            found.append(joined[offset : offset + size])
            offset += size + (-size % 4)
        return found

    # One trace for every length (a save's input positions change it): a retrace per length
    # was ~0.15 CPU-s, 33 of them in a suite run (AMD EPYC Zen 3); the slice below is of a
    # length known only at run time either way.
    @tf.function(
        input_signature=(tf.TensorSpec([None], tf.int32), tf.TensorSpec([1], tf.int32)),
        autograph=False,
    )
    def _all_gather(self, words, size):
        def replica(words, size):
            ctx = tf.distribute.get_replica_context()
            first = tf.cast(ctx.replica_id_in_sync_group % self.local_replicas == 0, tf.int32)
            sent = words[: tf.size(words) * first]
            return ctx.all_gather(sent, axis=0), ctx.all_gather(size * first, axis=0)

        return self.strategy.run(replica, args=(words, size))
