"""Which ``tf.distribute`` strategy a run uses.

MultiWorkerMirroredStrategy when ``TF_CONFIG`` names more than one worker; MirroredStrategy
over the visible GPUs (the first ``--worker_gpu`` of them) on one host; one device otherwise.
``split_cpu`` turns the CPU into several logical devices, so data parallelism can be tested
without GPUs.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf


def tf_config_workers() -> list[str]:
    config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
    return config.get("cluster", {}).get("worker", [])


def split_cpu(num_devices: int) -> list[str]:
    """Makes ``num_devices`` logical CPUs (call before TF initialises its devices)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(num_devices)]
    )
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def make_strategy(worker_gpu: int = 0, devices: list[str] | None = None) -> tf.distribute.Strategy:
    if len(tf_config_workers()) > 1:
        return tf.distribute.MultiWorkerMirroredStrategy()
    if devices:
        return tf.distribute.MirroredStrategy(devices)
    gpus = [d.name for d in tf.config.list_logical_devices("GPU")]
    if worker_gpu:
        if worker_gpu > len(gpus):
            raise ValueError(f"--worker_gpu={worker_gpu} but only {len(gpus)} GPU(s) are visible.")
        gpus = gpus[:worker_gpu]
    if len(gpus) > 1:
        return tf.distribute.MirroredStrategy(gpus)
    if len(gpus) == 1:
        return tf.distribute.OneDeviceStrategy(gpus[0])
    return tf.distribute.get_strategy()
