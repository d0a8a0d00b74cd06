"""The start-up handshake of a training cluster: every worker shows the others what must agree.

Why: MultiWorkerMirroredStrategy syncs variables only when they are made, and every worker
reads its flags, hparams, data and checkpoint on its own. Workers that restored different
checkpoints (a stale NFS or gcsfuse listing), warm-started from other weights, or were
started with another ``--train_steps``,
another ``--hparams`` or another set of shards, would average the gradients of different
models, or wait in a collective that the others never reach. So, after the restore and before
anything is written, all workers gather (one collective, ``bytes_gather.BytesGather``) what each one
restored or warm-started from (with a digest of the weights), its loop-shaping flags, its
hparams and its data; on any difference every worker
stops with the same one-line error naming the field, each worker's value and the fix.

The workers also agree on a data seed here: the chief's ``--random_seed``, or a number the
chief draws, so that every worker shuffles the files in the same order
(``data/input_pipeline.py``), with or without ``--random_seed``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from typing import Any

from t2t_repro.data.input_pipeline import list_shards
from t2t_repro.data.text_files import DataError
from t2t_repro.training.cluster.bytes_gather import BytesGather
from t2t_repro.training.cluster.exit_codes import PEER_ERRORS
from t2t_repro.training.cluster.tf_config import Cluster
from t2t_repro.training.run_setup import TrainingError

# The TrainerConfig fields that shape the loop every worker runs in step (loop lengths, saves,
# evaluations, the stop) or the update itself; all must be equal on every worker.
LOOP_FLAGS = (
    "train_steps",
    "reshard_on_resume",
    "steps_per_loop",
    "log_step_count_steps",
    "local_eval_frequency",
    "save_checkpoints_secs",
    "max_train_seconds",
    "eval_steps",
    "schedule",
    "mixed_precision",
    "xla",
    "random_seed",
)
RESTART = "restart the whole cluster (nothing was written)"


class ClusterMismatchError(TrainingError):
    """The workers of a cluster disagree on something they must share."""


def local_facts(
    cfg, hparams, restored: str | None, step: int, problem, warm_started: dict | None = None
) -> dict[str, Any]:
    """What this worker brings to the handshake (JSON-able). ``warm_started``:
    ``warm_start.loaded``'s checkpoint and weights digest (None: no warm start)."""
    shards = {}
    for split in ("train", "dev"):
        try:
            shards[split] = [
                os.path.basename(f) for f in list_shards(problem.filepattern(cfg.data_dir, split))
            ]
        except DataError:
            shards[split] = []
    return {
        "restored": os.path.basename(restored) if restored else "no checkpoint",
        "step": step,
        "warm_start": warm_started,
        "problem": cfg.problem,
        "model": cfg.model,
        "flags": {name: getattr(cfg, name) for name in LOOP_FLAGS},
        "hparams": json.loads(json.dumps(hparams.values(), sort_keys=True, default=str)),
        "shards": shards,
        "output_dir": cfg.output_dir,  # not compared: named in the messages (the chief's)
        "data_dir": cfg.data_dir,
        "data_seed": cfg.random_seed if cfg.random_seed is not None else secrets.randbits(31),
    }


def refuse_on_a_cluster(cfg, cluster: Cluster) -> None:
    """What several workers cannot do, refused in one line before the strategy starts."""
    if cluster.workers == 1:
        return
    if cfg.generate_data:  # all would write one data_dir
        raise TrainingError(
            "--generate_data with several workers: run t2t-datagen once, then start the "
            "cluster without --generate_data."
        )
    if cfg.schedule == "continuous_eval":  # each worker would evaluate its own checkpoints
        raise TrainingError(
            "--schedule=continuous_eval with several workers (TF_CONFIG is set): run the "
            "evaluator as one more process without TF_CONFIG, e.g. `env -u TF_CONFIG "
            "t2t-trainer --schedule=continuous_eval ...` with the same --output_dir."
        )


def worker_seed(seed: int | None, index: int) -> int | None:
    """``seed`` for worker 0 (a one-host run keeps its draws), another one for each other
    worker, so that host-side random draws (word dropout) differ between workers."""
    return seed if seed is None or index == 0 else (seed * 1_000_003 + index) % 2**31


def handshake(trainer) -> int | None:
    """The trainer's facts agreed by every worker (``agree``); returns the agreed data seed.
    Both parts are watched stages (``trainer.watchdog``)."""
    cfg, seed = trainer.cfg, trainer.cfg.random_seed
    if trainer.cluster.workers > 1:
        restored, step = trainer.ckpt.restored, trainer.step
        with trainer.watchdog.stage("start-up: listing the train and dev shards"):
            facts = local_facts(
                cfg, trainer.hparams, restored, step, trainer.problem, trainer.warm_started
            )
        with trainer.watchdog.stage("start-up handshake", waits_for_peers=True):
            seed = agree(trainer.strategy, trainer.cluster, facts)
    return seed


def agree(strategy, cluster: Cluster, facts: dict[str, Any]) -> int | None:
    """Gathers every worker's ``facts``; raises ClusterMismatchError on any difference (on
    every worker alike); returns the agreed data seed (the chief's). One host: no collective,
    the seed is ``--random_seed`` (None: unseeded, as before)."""
    if cluster.workers == 1:
        return facts["flags"]["random_seed"]
    gather = BytesGather(strategy, cluster.workers)
    everyone = [json.loads(b) for b in gather(json.dumps(facts, sort_keys=True).encode())]
    problem = first_difference(everyone)
    if problem:
        _all_have_gathered(gather)
        raise ClusterMismatchError(problem)
    return everyone[0]["data_seed"]


def _all_have_gathered(gather: BytesGather) -> None:
    """Returns once every worker has the gathered facts, so that none exits first.

    Why: a worker's collective can finish before its peers have pulled its own part (a
    receiver fetches from the sender); a worker that then raised and exited left a peer
    with "worker 0 failed" instead of the mismatch. A peer reaches this second gather
    only after its first one returned. A peer that exits once it has its own result may
    fail this gather here: the mismatch, which this worker holds, is still what it says."""
    try:
        gather(b"done")
    except PEER_ERRORS:
        pass


def first_difference(everyone: list[dict]) -> str | None:
    """The one-line message for the first field the workers disagree on; None if none."""
    output_dir, data_dir = everyone[0]["output_dir"], everyone[0]["data_dir"]  # the chief's

    def differs(get) -> bool:
        return len({json.dumps(get(f), sort_keys=True) for f in everyone}) > 1

    if differs(lambda f: (f["restored"], f["step"])):
        values = [f"{f['restored']} (step {f['step']})" for f in everyone]
        return (
            "the workers restored different checkpoints from the chief's --output_dir "
            f"{output_dir}: {_by_worker(values)}. Every worker must see the same files "
            "there: one shared directory or bucket with fresh listings (NFS: mount with "
            "lookupcache=positive or noac; gcsfuse: no stat or type cache); fix that, then "
            + RESTART
            + "."
        )
    if differs(
        lambda f: (
            f["warm_start"]
            and (os.path.basename(f["warm_start"]["source"]), f["warm_start"]["weights"])
        )
    ):
        values = [
            f"{w['source']} (weights {w['weights']})" if w else "no warm start"
            for w in (f["warm_start"] for f in everyone)
        ]
        return (
            f"the workers warm-started from different weights: {_by_worker(values)}. Give "
            "every worker the same --warm_start_from, on storage they all see alike (a fresh "
            "listing of its directory, or name the exact ckpt-N), then " + RESTART + "."
        )
    for name in ("problem", "model"):
        if differs(lambda f, name=name: f[name]):
            values = [f[name] for f in everyone]
            return f"the workers train different --{name}: {_by_worker(values)}. {_same_command()}"
    for name in LOOP_FLAGS:
        if differs(lambda f, name=name: f["flags"][name]):
            values = [f["flags"][name] for f in everyone]
            return f"the workers were started with different --{name}: {_by_worker(values)}. " + (
                _same_command()
            )
    if differs(lambda f: f["hparams"]):
        hashes = [_digest(f["hparams"]) for f in everyone]
        names = sorted(set().union(*(f["hparams"] for f in everyone)))
        name = next(n for n in names if differs(lambda f, n=n: f["hparams"].get(n)))
        values = [f["hparams"].get(name, "(unset)") for f in everyone]
        return (
            f"the workers' hparams differ, first at {name}: {_by_worker(values)} (hparams "
            f"hash {_by_worker(hashes)}). Start every worker with the same --hparams_set and "
            f"--hparams (a resumed run reads {output_dir}/hparams.json, which every worker "
            "must see), then " + RESTART + "."
        )
    for split in ("train", "dev"):
        if differs(lambda f, split=split: f["shards"][split]):
            lists = [f["shards"][split] for f in everyone]
            union = sorted(set().union(*lists))
            first = next(name for name in union if any(name not in s for s in lists))
            values = [f"{len(s)} ({'has' if first in s else 'lacks'} {first})" for s in lists]
            return (
                f"the workers see different {split} shards in --data_dir ({data_dir} on the "
                f"chief): {_by_worker(values)}. Every worker's --data_dir must hold the same "
                "shards (copy them, or share one directory), then " + RESTART + "."
            )
    return None


def _same_command() -> str:
    return (
        "Start every worker with the same command (only TF_CONFIG differs), then " + RESTART + "."
    )


def _digest(values: dict) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:8]


def _by_worker(values: list) -> str:
    """``40 on worker 0 (the chief), 80 on worker 1``: each value with the workers holding it
    (a long list of workers is cut short)."""
    groups: dict[str, list[int]] = {}
    for worker, value in enumerate(values):
        groups.setdefault(str(value), []).append(worker)
    parts = []
    for value, workers in groups.items():
        names = ", ".join(str(w) + (" (the chief)" if w == 0 else "") for w in workers[:4])
        more = f" and {len(workers) - 4} more" if len(workers) > 4 else ""
        parts.append(f"{value} on worker{'s' if len(workers) > 1 else ''} {names}{more}")
    return ", ".join(parts)
