"""How a resumed run lays out its updates: the checkpoint's global batch, kept.

Every checkpoint records its *micro-batches per update* (replicas x accumulation steps; each
micro-batch is ``batch_size`` tokens on one replica). A run that resumes makes the same
number, spread over its own replicas (more accumulation steps on fewer replicas), so the
global batch, and with the restored step the learning rate, continue unchanged.

Another number of workers is harder: each worker read its own shard of the data, and the
saved input positions (one per worker) cannot place another cluster's input. Such a resume
is refused in one line, as before, unless ``--reshard_on_resume`` asks for it: then weights,
optimizer, step and learning rate are restored exactly, the global batch is kept, and the
data order continues from a new seed that every worker derives alike (the agreed seed and
the step): not the batches an unresharded run would have read next (docs/distributed.md).
"""

from __future__ import annotations

import dataclasses

from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.training.loop.input_feed import WorkerPositions


@dataclasses.dataclass(frozen=True)
class ResumeLayout:
    accumulate: int  # micro-batches per replica in each update, for this run
    reshard: bool  # the input positions do not carry over (another number of workers)
    note: str = ""  # what changed, for the log ("" when nothing did)


def _who(workers: int) -> str:
    return f"a cluster of {workers} workers" if workers > 1 else "one host"


def _reshard_text(restored: str, saved_workers: int, workers: int) -> str:
    return (
        f"--reshard_on_resume: {restored} was saved by {saved_workers} worker(s), this "
        f"run has {workers}; weights, optimizer, step and learning rate "
        "are restored, the saved input positions are not: the data order continues "
        "from a new seed"
    )


def resume_layout(
    restored: str,
    saved_workers: int,
    saved_micro_batches: int,
    workers: int,
    replicas: int,
    accumulate: int,
    reshard_on_resume: bool,
) -> ResumeLayout:
    """The layout of a run resuming from ``restored`` (``saved_micro_batches`` 0: the
    checkpoint predates the record, its global batch is unknown)."""
    reshard = saved_workers != workers
    if reshard:
        if not reshard_on_resume:
            by = _who(saved_workers) if saved_workers > 1 else "a run on one host"
            this = "this run is on one host"
            if workers > 1:
                this = f"this cluster has {workers} workers"
            again = "on one host"
            if saved_workers > 1:
                again = f"with a TF_CONFIG of {saved_workers} workers"
            raise CheckpointError(
                f"{restored} was saved by {by} and {this}: the input positions cannot be "
                f"restored. Resume it {again}, pass --reshard_on_resume to continue on this "
                "shape (same global batch; the data order continues from a new seed), or "
                "start a new --output_dir."
            )
        if not saved_micro_batches:
            raise CheckpointError(
                f"--reshard_on_resume: {restored} does not record its global batch (it was "
                "saved by an older t2t_repro or imported from T2T); resume it on "
                f"{_who(saved_workers)}, or start a new --output_dir."
            )
    told = _reshard_text(restored, saved_workers, workers) if reshard else ""
    if not saved_micro_batches or saved_micro_batches == replicas * accumulate:
        return ResumeLayout(accumulate, reshard, told)
    if saved_micro_batches % replicas:
        if reshard:
            raise CheckpointError(
                f"--reshard_on_resume keeps the global batch of {restored}, "
                f"{saved_micro_batches} micro-batches per update, in whole micro-batches: "
                f"they do not divide among this run's {replicas} replicas. Use a number of "
                f"replicas that divides {saved_micro_batches}."
            )
        return ResumeLayout(
            accumulate,
            False,
            f"note: {restored} made {saved_micro_batches} micro-batches per update, which "
            f"do not divide among {replicas} replicas: this run makes {replicas * accumulate} "
            "(a different global batch)",
        )
    kept = saved_micro_batches // replicas
    note = (
        f"keeping the global batch of {restored}: {saved_micro_batches} micro-batches per "
        f"update = {replicas} replica(s) x {kept} accumulation step(s) "
        f"(--hparams optimizer_multistep_accumulate_steps={accumulate} is for "
        f"{replicas * accumulate})"
    )
    return ResumeLayout(kept, reshard, "\n".join(filter(None, (note, told))))


def resharded_seed(data_seed: int | None, step: int) -> int | None:
    """The data seed after a reshard: every worker derives the same one from the agreed seed
    and the restored step, so the order does not start the epoch over (None stays None:
    an unseeded run shuffles afresh anyway)."""
    return None if data_seed is None else (data_seed * 1_000_003 + step + 1) % 2**31


def lay_out_updates(trainer, restored: str) -> None:
    """The restored checkpoint's global batch on the trainer's replicas (``resume_layout``):
    sets its ``accumulate`` and ``resharded``, and prints what changed."""
    shape = trainer.ckpt.saved_shape(WorkerPositions.KEY)
    layout = resume_layout(
        restored,
        shape[0] if shape else 1,
        int(trainer.ckpt.micro_batches.numpy()),
        trainer.cluster.workers,
        trainer.strategy.num_replicas_in_sync,
        trainer.accumulate,
        trainer.cfg.reshard_on_resume,
    )
    trainer.accumulate, trainer.resharded = layout.accumulate, layout.reshard
    if layout.reshard:
        trainer.ckpt.leave_unrestored()
    if layout.note:
        print(layout.note, flush=True)
