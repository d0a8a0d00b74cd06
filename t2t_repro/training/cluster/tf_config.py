"""This process's place in a training cluster, from TF_CONFIG; free of TensorFlow.

Why one module: the trainer's cluster flags are checked before TensorFlow is imported
(``cluster_flags``), and TF's own reader, ``TFConfigClusterResolver``, imports TensorFlow
(``tensorflow/python/distribute/cluster_resolver/tfconfig_cluster_resolver.py`` pulls in
``training/server_lib``). So :func:`read` parses TF_CONFIG as that resolver does (its
``cluster_spec``, ``task_type`` and ``task_id``), and :func:`rank` validates and ranks; the
strategy's reading (``distribution.cluster``) passes the resolver's values to the same
:func:`rank`, so both readings give one answer. The chief, if any, is worker 0 and the
``worker`` tasks follow it, as ``multi_worker_util.id_in_cluster`` numbers them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

from t2t_repro.errors import UserError


@dataclasses.dataclass(frozen=True)
class Cluster:
    """This process's place in the training cluster (one task on one host by default)."""

    workers: int = 1  # training processes (chief + workers)
    index: int = 0  # this process's rank: the chief is 0, then the workers in order
    task: str = "worker"
    task_id: int = 0  # TF_CONFIG's task index (the chief's is 0, and so is worker 0's)

    @property
    def is_chief(self) -> bool:
        """The one writer into output_dir: the chief task, or worker 0 without one."""
        return self.index == 0


def rank(spec: Mapping[str, Any], task: str | None, task_id: int | None) -> Cluster:
    """The Cluster of task ``task``/``task_id`` in ``spec`` (job name -> addresses); one-line
    UserError for a cluster MultiWorkerMirroredStrategy cannot train."""
    chiefs, workers = len(spec.get("chief", [])), len(spec.get("worker", []))
    others = sorted(set(spec) - {"chief", "worker"})
    if others:
        raise UserError(
            f"TF_CONFIG names {', '.join(others)} tasks; t2t-trainer trains with "
            "MultiWorkerMirroredStrategy: list every training process under 'chief' (at most "
            "one) and 'worker'."
        )
    if chiefs + workers <= 1:
        return Cluster()
    if chiefs > 1:
        raise UserError(f"TF_CONFIG lists {chiefs} chiefs; a cluster has at most one.")
    size = {"chief": chiefs, "worker": workers}.get(task, 0)
    if task_id is None or not 0 <= task_id < size:
        raise UserError(
            f"TF_CONFIG's task {{'type': {task!r}, 'index': {task_id!r}}} is not in its cluster "
            f"(chief: {chiefs}, worker: {workers})."
        )
    return Cluster(
        chiefs + workers, task_id if task == "chief" else chiefs + task_id, task, task_id
    )


READ_ERRORS = (ValueError, TypeError, AttributeError, KeyError)  # what a malformed one raises


def is_set(environ: Mapping[str, str] | None = None) -> bool:
    """Whether TF_CONFIG is set to something (even one task, or malformed)."""
    return bool((os.environ if environ is None else environ).get("TF_CONFIG", "").strip())


def read(environ: Mapping[str, str] | None = None) -> Cluster:
    """The Cluster TF_CONFIG describes, read as ``TFConfigClusterResolver`` reads it."""
    text = (os.environ if environ is None else environ).get("TF_CONFIG", "")
    try:
        config = json.loads(text) if text.strip() else {}
        task = config.get("task", {})
        spec = config.get("cluster", {})
        task_type = str(task["type"]) if "type" in task else None
        task_id = int(task["index"]) if "index" in task else None
        return rank(spec, task_type, task_id)
    except READ_ERRORS as e:
        raise invalid(e) from None


def invalid(error: Exception) -> UserError:
    """The one-line error for a TF_CONFIG that cannot be read (by either reading)."""
    if isinstance(error, json.JSONDecodeError):
        return UserError(f"TF_CONFIG is not valid JSON: {error}.")
    return UserError(
        'TF_CONFIG must be {"cluster": {"chief": [...], "worker": ["host:port", ...]}, '
        '"task": {"type": "chief" or "worker", "index": N}} (docs/distributed.md).'
    )
