"""T2T's cluster flags, accepted when they say what a run does anyway, else refused in one line
that gives the TF_CONFIG to set instead.

Why: T2T ran several hosts as TF1 Estimator tasks named by flags (``tensor2tensor/utils/flags.py``
and ``bin/t2t_trainer.py``: ``--master``, ``--worker_replicas``, ``--worker_id``,
``--ps_replicas``, ``--ps_gpu``, ``--sync``, ``--schedule=run_std_server`` for parameter servers;
``utils/trainer_lib.py``, ``create_run_config``). Here a cluster is only TF_CONFIG, read by
``tf.distribute`` (MultiWorkerMirroredStrategy: every worker computes, gradients are summed by
all-reduce, there are no parameter servers and no asynchronous mode). A T2T command line must
not start a run that silently means something else, so each flag is checked before TensorFlow
starts. Kept free of TensorFlow.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from t2t_repro.bool_flags import add_bool
from t2t_repro.errors import UsageError
from t2t_repro.training.cluster import tf_config

DOCS = "docs/distributed.md"
# T2T's defaults: the values that ask for nothing beyond one synchronous host.
T2T_DEFAULTS: dict[str, Any] = {
    "master": "",
    "worker_job": "/job:localhost",
    "ps_replicas": 0,
    "ps_gpu": 0,
    "ps_job": "/job:ps",
    "gpu_order": "",
    "sync": False,
    "use_tpu": False,
}
PS_SCHEDULE = "run_std_server"


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """T2T's flags with T2T's defaults, grouped under one heading of ``--help``."""
    group = parser.add_argument_group(
        "T2T cluster flags",
        f"accepted when they agree with TF_CONFIG, else refused with the TF_CONFIG to set ({DOCS})",
    )
    group.add_argument("--master", default="", help="T2T's TF1 master: refused; use TF_CONFIG")
    # None: not given, so that a worker that leaves them out is not held to T2T's 1 and 0.
    group.add_argument("--worker_replicas", type=int, help="= the workers in TF_CONFIG (T2T: 1)")
    group.add_argument("--worker_id", type=int, help="= this task's TF_CONFIG number (T2T: 0)")
    group.add_argument("--worker_job", default="/job:localhost", help="T2T's: refused if changed")
    group.add_argument("--ps_replicas", type=int, default=0, help="parameter servers: refused")
    group.add_argument("--ps_gpu", type=int, default=0, help="GPUs per parameter server: refused")
    group.add_argument("--ps_job", default="/job:ps", help="T2T's: refused if changed")
    group.add_argument("--gpu_order", default="", help="refused; use CUDA_VISIBLE_DEVICES")
    add_bool(group, "sync", "accepted: training is always synchronous")
    group.add_argument("--no-sync", dest="sync", action="store_false", help=argparse.SUPPRESS)
    add_bool(group, "use_tpu", "refused: TPUs are not supported")


def tf_config_position(environ: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """(workers, this task's rank) from TF_CONFIG (``tf_config.read``, the one reading the
    strategy agrees with), or None when TF_CONFIG is not set."""
    if not tf_config.is_set(environ):
        return None
    found = tf_config.read(environ)
    return found.workers, found.index


def tf_config_example(workers: int, index: int) -> str:
    hosts = ", ".join(f'"host{i}:2222"' for i in range(workers))
    return (
        f'TF_CONFIG=\'{{"cluster": {{"worker": [{hosts}]}}, '
        f'"task": {{"type": "worker", "index": {index}}}}}\''
    )


def check_cluster_flags(flags: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Raises UsageError (one line) for a T2T cluster flag that asks for what t2t_repro does
    not do, or that contradicts TF_CONFIG; the message gives the TF_CONFIG equivalent."""
    position = tf_config_position(environ)
    replicas, worker_id = flags["worker_replicas"], flags["worker_id"]
    host = worker_id or 0
    workers = max(replicas or 1, flags["ps_replicas"], host + 1, 2)
    example = tf_config_example(workers, host)
    instead = f"set {example} on host {host} (and so on for each host; {DOCS})"
    if flags["use_tpu"]:
        raise UsageError(f"--use_tpu: TPUs are not supported; train on GPUs or CPUs ({DOCS}).")
    if flags.get("schedule") == PS_SCHEDULE:
        raise UsageError(
            f"--schedule={PS_SCHEDULE}: there are no parameter servers to run; every host "
            f"trains with --schedule=train and its TF_CONFIG, e.g. {example} ({DOCS})."
        )
    if flags["ps_replicas"] or flags["ps_gpu"]:
        raise UsageError(
            f"--ps_replicas={flags['ps_replicas']} --ps_gpu={flags['ps_gpu']}: there are no "
            "parameter servers (variables are mirrored, gradients all-reduced); the hosts "
            f"that computed become workers: {instead}."
        )
    if flags["master"]:
        raise UsageError(f"--master={flags['master']}: there is no TF1 master; {instead}.")
    for name in ("worker_job", "ps_job"):
        if flags[name] != T2T_DEFAULTS[name]:
            raise UsageError(
                f"--{name}={flags[name]}: job names come from TF_CONFIG (chief, worker); {instead}."
            )
    if flags["gpu_order"]:
        order = ",".join(flags["gpu_order"].split())
        raise UsageError(
            f"--gpu_order={flags['gpu_order']!r}: choose and order GPUs with "
            f"CUDA_VISIBLE_DEVICES={order} instead."
        )
    if position is None and ((replicas or 1) != 1 or host != 0):
        raise UsageError(
            f"--worker_replicas={replicas} --worker_id={worker_id}: several hosts are named by "
            f"TF_CONFIG, which is not set: {instead}."
        )
    if position is not None and (
        replicas not in (None, position[0]) or worker_id not in (None, position[1])
    ):
        raise UsageError(
            f"--worker_replicas={replicas} --worker_id={worker_id} disagree with TF_CONFIG "
            f"(worker {position[1]} of {position[0]}); drop them or fix TF_CONFIG ({DOCS})."
        )
