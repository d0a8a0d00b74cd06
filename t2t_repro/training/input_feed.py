"""The training input of one host as a checkpointable iterator, dealt to its replicas.

``tf.distribute``'s own distributed iterators cannot be saved in a checkpoint, so on one
host the trainer iterates the host's ``tf.data`` pipeline itself (a plain iterator, whose
state -- shuffle buffers, bucket windows, file offsets -- ``tf.train.Checkpoint`` saves) and
hands successive batches to replicas 0, 1, ... in turn: the order in which
``distribute_datasets_from_function`` hands them out, so the updates are the same.
"""

from __future__ import annotations

import tensorflow as tf


class ReplicaFeed:
    """``next(feed)`` (also inside ``tf.function``): one batch per replica, as PerReplica."""

    def __init__(self, strategy: tf.distribute.Strategy, dataset: tf.data.Dataset) -> None:
        self.strategy = strategy
        self.replicas = strategy.num_replicas_in_sync
        with tf.device("/cpu:0"):
            self.iterator = iter(dataset)

    def __iter__(self) -> ReplicaFeed:
        return self

    def __next__(self):
        if self.replicas == 1:
            return next(self.iterator)
        batches = [next(self.iterator) for _ in range(self.replicas)]
        return self.strategy.experimental_distribute_values_from_function(
            lambda ctx: batches[ctx.replica_id_in_sync_group]
        )
