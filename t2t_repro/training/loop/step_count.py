"""What the trainer's step counts: T2T's global step, one per batch.

T2T advances its global step once per batch (every ``session.run`` of the train op,
``tensor2tensor/utils/optimize.py, optimize`` through ``optimize_loss``). Only
``optimizer=multistep_adam`` takes several batches per update (``utils/multistep_optimizer.py,
MultistepAdamOptimizer``): then ``--train_steps``, ``--local_eval_frequency``,
``--log_step_count_steps``, ``--steps_per_loop``, the checkpoint names and the steps of the
event files count batches, ``optimizer_multistep_accumulate_steps`` per update.
Here the optimizer counts updates (Keras ``iterations``), so the trainer's step is
``iterations * steps_per_update`` and a loop call runs whole updates up to the first update
boundary at or after the next event (``updates_to_next_event``, ``crossed``).

Checkpoints record ``steps_per_update`` (``checkpoints/training.py``); one without it was saved
before the name had T2T's meaning everywhere (``restored_meaning`` says what that changes).
"""

from __future__ import annotations

from t2t_repro.training.run_setup import TrainingError


def check_train_steps(steps_per_update: int, train_steps: int, flag: str = "--train_steps") -> None:
    """TrainingError (one line) for a --train_steps that ends inside a multistep_adam update
    (under train_eval_and_decode, whose rounds end the training: a --local_eval_frequency,
    ``flag``)."""
    if steps_per_update > 1 and train_steps % steps_per_update:
        raise TrainingError(
            f"{flag}={train_steps} counts batches as in T2T, and optimizer=multistep_adam "
            f"updates every {steps_per_update} (optimizer_multistep_accumulate_steps): T2T would "
            "stop with part of an update accumulated, which a checkpoint here does not keep; "
            f"use a multiple of {steps_per_update}."
        )


def crossed(previous: int, step: int, every: int) -> bool:
    """Whether a step-counted event every ``every`` steps fell in (previous, step]."""
    return bool(every) and step // every > previous // every


def updates_to_next_event(
    step: int, steps_per_update: int, train_steps: int, steps_per_loop: int, periods
) -> int:
    """Updates in the next loop call: up to the first update boundary at or after the next
    log line, save, eval or the end (``periods``: the step intervals, 0 for none)."""
    every = [e for e in periods if e]
    steps = min(steps_per_loop, train_steps - step, *(e - step % e for e in every))
    return max(1, -(-steps // steps_per_update))


def restored_meaning(
    restored: str,
    saved_steps_per_update: int,
    updates: int,
    steps_per_update: int,
    optimizer: str,
    accumulate_steps: int,
) -> str:
    """The note for a checkpoint saved before optimizer_multistep_accumulate_steps had T2T's
    meaning ("" when nothing changed); TrainingError (one line) when that run accumulated
    under another optimizer than multistep_adam, which T2T never does."""
    if saved_steps_per_update or accumulate_steps <= 1:
        return ""
    if steps_per_update == 1:
        raise TrainingError(
            f"{restored} was trained when optimizer_multistep_accumulate_steps="
            f"{accumulate_steps} made optimizer={optimizer!r} accumulate {accumulate_steps} "
            "batches per update; as in T2T it now only divides the learning-rate schedule's "
            "step and every batch is an update. Start a new --output_dir with "
            "--hparams=optimizer=multistep_adam (T2T's accumulation), or warm-start one from "
            f"it with --warm_start_from={restored}."
        )
    return (
        f"note: {restored} was saved when --train_steps counted multistep_adam updates; its "
        f"{updates} updates are T2T step {updates * steps_per_update}, and --train_steps and "
        f"the other step flags now count batches as in T2T ({steps_per_update} per update)."
    )


def announce_restored_meaning(trainer, restored: str) -> None:
    """Prints ``restored_meaning``'s note for the trainer's restored checkpoint (or raises)."""
    hp = trainer.hparams
    note = restored_meaning(
        restored,
        trainer.ckpt.saved_steps_per_update,
        trainer.updates,
        trainer.steps_per_update,
        hp.optimizer,
        hp.optimizer_multistep_accumulate_steps,
    )
    if note:
        print(note, flush=True)
