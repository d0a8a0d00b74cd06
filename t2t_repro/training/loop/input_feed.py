"""The training input of one host as a checkpointable iterator, dealt to its replicas.

``tf.distribute``'s own distributed iterators cannot be saved in a checkpoint, so on one
host the trainer iterates the host's ``tf.data`` pipeline itself (a plain iterator, whose
state -- shuffle buffers, bucket windows, file offsets -- ``tf.train.Checkpoint`` saves) and
hands successive batches to replicas 0, 1, ... in turn: the order in which
``distribute_datasets_from_function`` hands them out, so the updates are the same. On
several workers each host's pipeline reads its own shard and feeds the host's replicas
(MultiWorkerMirroredStrategy numbers replicas worker by worker).
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.training.cluster.bytes_gather import BytesGather


class ReplicaFeed:
    """``next(feed)`` (also inside ``tf.function``): one batch per replica, as PerReplica."""

    def __init__(
        self, strategy: tf.distribute.Strategy, dataset: tf.data.Dataset, workers: int = 1
    ) -> None:
        self.strategy = strategy
        self.replicas = strategy.num_replicas_in_sync // workers  # this host's replicas
        with tf.device("/cpu:0"):
            self.iterator = iter(dataset)

    def __iter__(self) -> ReplicaFeed:
        return self

    def __next__(self):
        if self.replicas == 1:
            return next(self.iterator)
        batches = [next(self.iterator) for _ in range(self.replicas)]
        return self.strategy.experimental_distribute_values_from_function(
            lambda ctx: batches[ctx.replica_id_in_sync_group % self.replicas]
        )


class WorkerPositions:
    """Every worker's input position in one string vector that the chief's checkpoint saves.

    Why: only the chief writes into output_dir (``docs/reliability.md``), but each worker
    reads its own shard of the data, so each has its own iterator state. Before every save
    all workers gather their serialized states (one uneven ``all_gather`` of their bytes, a
    collective every worker joins, as it joins the save); every worker then holds the same
    vector, and the chief's checkpoint keeps it under ``worker_inputs``. On resume each
    worker reads its own entry from the chief's checkpoint and restores its iterator in
    constant time, as on one host. A cluster of another size restores none of them (it must
    be asked to: ``--reshard_on_resume``, ``resume_layout.py``).
    """

    KEY = "worker_inputs"  # its name in the checkpoint

    def __init__(self, strategy: tf.distribute.Strategy, feed: ReplicaFeed, index: int) -> None:
        self.strategy = strategy
        self.feed = feed
        self.index = index
        self.workers = strategy.num_replicas_in_sync // feed.replicas
        self._gather = BytesGather(strategy, self.workers)
        with tf.device("/cpu:0"):
            # Any length: a checkpoint of another cluster size restores into it when the run
            # reshards (--reshard_on_resume), which then ignores it.
            self.states = tf.Variable(
                [""] * self.workers, trainable=False, name=self.KEY, shape=tf.TensorShape([None])
            )

    def gather(self) -> None:
        """Every worker's current state into ``states`` (all workers call it together)."""
        with tf.device("/cpu:0"):
            state = tf.io.serialize_tensor(
                self.feed.iterator._serialize_to_tensors()["_STATE"]  # noqa: SLF001
            ).numpy()
        self.states.assign(self._gather(state))

    def restore(self) -> bool:
        """This worker's iterator from its restored entry; False when there is none."""
        state = self.states[self.index]
        if not state.numpy():
            return False
        with tf.device("/cpu:0"):
            variant = tf.io.parse_tensor(state, tf.variant)
            self.feed.iterator._restore_from_tensors({"_STATE": variant})  # noqa: SLF001
        return True


def positioned_feed(strategy, ckpt, cluster, dataset_fn, skip: int, restore: bool = True):
    """The training input as a ReplicaFeed at the position ``ckpt`` (a
    ``TrainingCheckpoint``) restored, and the ``WorkerPositions`` of a cluster (else None).

    On one host the iterator state is saved with every checkpoint and restored from it
    (constant time); ``dataset_fn`` already skips ``skip`` batches when the checkpoint holds
    no state. On several workers each worker's position travels in the chief's checkpoint.
    ``restore`` False (a reshard): the workers' saved positions are not used.
    """
    if cluster.workers > 1:
        context = tf.distribute.InputContext(
            cluster.workers, cluster.index, strategy.num_replicas_in_sync
        )
        feed = ReplicaFeed(strategy, dataset_fn(context), cluster.workers)
        positions = WorkerPositions(strategy, feed, cluster.index)
        setattr(ckpt.checkpoint, WorkerPositions.KEY, positions.states)
        if restore:
            positions.restore()  # the states were restored on attachment (above)
        return feed, positions
    if skip:
        print(
            f"skipping the {skip:,} batches consumed so far ({ckpt.restored} holds no input state)",
            flush=True,
        )
    # one pipeline feeding this host's replicas (a fixed batch is split over them)
    feed = ReplicaFeed(
        strategy, dataset_fn(tf.distribute.InputContext(1, 0, strategy.num_replicas_in_sync))
    )
    try:
        ckpt.track_input(feed.iterator)  # restores the saved state, if there is one
    except (tf.errors.OpError, ValueError) as e:
        raise CheckpointError(
            f"Cannot restore the input position saved in {ckpt.restored}: "
            f"{str(e).strip().splitlines()[0][:200]}. The training data changed since; "
            "restore the same shards, or use a new --output_dir."
        ) from None
    return feed, None
