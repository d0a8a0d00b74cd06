"""Which ``tf.distribute`` strategy a run uses, and which task of a cluster this process is.

MultiWorkerMirroredStrategy when ``TF_CONFIG`` names more than one task (read with TF's own
``TFConfigClusterResolver``, so both the plain ``{"worker": [a, b]}`` and the managed-cluster
``{"chief": [a], "worker": [b]}`` formats count every process); MirroredStrategy over the
visible GPUs (the first ``--worker_gpu`` of them, T2T's meaning: 1 by default, 0 for the CPU)
on one host; one device otherwise.
``split_cpu`` turns the CPU into several logical devices, so data parallelism can be tested
without GPUs.

MultiWorkerMirroredStrategy configures collective ops, which TensorFlow only accepts before
its eager context exists (``RuntimeError: Collective ops must be configured at program
startup``). ``make_strategy`` is therefore the first thing the trainer does, and it makes
the multi-worker strategy once per process (a second call returns the same one).
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.errors import UserError
from t2t_repro.training.cluster import tf_config
from t2t_repro.training.cluster.tf_config import Cluster

_multi_worker: list = []  # the one MultiWorkerMirroredStrategy of this process, once made


def cluster() -> Cluster:
    """The cluster ``TF_CONFIG`` describes, read by TF's ``TFConfigClusterResolver`` (as the
    strategy reads it) and ranked by ``tf_config.rank``, as the TF-free ``tf_config.read``
    that checks the cluster flags before TensorFlow starts."""
    if not tf_config.is_set():
        return Cluster()
    try:
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        spec = resolver.cluster_spec().as_dict()
        task, task_id = resolver.task_type, resolver.task_id
    except tf_config.READ_ERRORS as e:
        raise tf_config.invalid(e) from None
    return tf_config.rank(spec, task, task_id)


def split_cpu(num_devices: int) -> list[str]:
    """Makes ``num_devices`` logical CPUs (call before TF initialises its devices)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(num_devices)]
    )
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def _use_first_gpus(count: int) -> None:
    """MultiWorkerMirroredStrategy trains on every GPU it sees: hide all but the first
    ``count`` (``--worker_gpu``; 0: all, the CPU trains) from this process, before TensorFlow
    initialises them."""
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) <= count:
        return
    try:
        tf.config.set_visible_devices(gpus[:count], "GPU")
    except RuntimeError:  # the GPUs were initialised already (not in t2t-trainer)
        raise UserError(
            f"--worker_gpu={count} cannot take effect now; set CUDA_VISIBLE_DEVICES to the "
            f"{count} GPU(s) to use on this host instead."
        ) from None


def make_strategy(
    worker_gpu: int = 1, devices: list[str] | None = None, collective_timeout_secs: float = 0
) -> tf.distribute.Strategy:
    """The run's strategy; call it before anything runs a TensorFlow op (see the module doc).

    ``collective_timeout_secs`` (several workers; 0: none): a collective that waits longer
    for a worker raises ``DeadlineExceededError`` instead of hanging (a stuck worker)."""
    if cluster().workers > 1:
        if not _multi_worker:
            _use_first_gpus(worker_gpu)
            # The coordination service's heartbeat timeout stays TF's default: the strategy
            # sets no timeout, and only the private context.configure_coordination_service
            # could (docs/distributed.md, troubleshooting).
            resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
            options = tf.distribute.experimental.CommunicationOptions(
                timeout_seconds=collective_timeout_secs or None
            )
            strategy = tf.distribute.MultiWorkerMirroredStrategy(resolver, options)
            _multi_worker.append(strategy)
        return _multi_worker[0]
    if devices:
        return tf.distribute.MirroredStrategy(devices)
    gpus = [d.name for d in tf.config.list_logical_devices("GPU")]
    if worker_gpu > max(len(gpus), 1):
        raise ValueError(f"--worker_gpu={worker_gpu} but only {len(gpus)} GPU(s) are visible.")
    if gpus and not worker_gpu:  # T2T's worker_gpu=0: cpu:0 (utils/devices.py)
        return tf.distribute.OneDeviceStrategy("/cpu:0")
    gpus = gpus[:worker_gpu]
    if len(gpus) > 1:
        return tf.distribute.MirroredStrategy(gpus)
    if len(gpus) == 1:
        return tf.distribute.OneDeviceStrategy(gpus[0])
    return tf.distribute.get_strategy()
