"""Training checkpoints: model, optimizer (with its step counter) and the input position.

``tf.train.CheckpointManager`` writes ``ckpt-<step>.*`` data files first and replaces the
``checkpoint`` state file last (atomically), so a run killed mid-save still resumes from the
previous checkpoint. The resume point is the newest *complete* ``ckpt-N`` on disk
(:mod:`t2t_repro.checkpoints.files`): a garbled or stale state file never makes a run start
again from step 0 over existing checkpoints, and a save never replaces a checkpoint that
this run did not write. The model sits under the key ``model`` that every reading tool uses.

The input position is the tf.data iterator's own state (shuffle buffers, bucket windows,
file offsets), saved under ``input_iterator``: a resumed run continues with the very next
batch in constant time instead of replaying the batches already consumed.
``batches_consumed`` stays for checkpoints without that state (older runs).

On several workers only the chief writes into ``output_dir`` (TF's rule: every worker must
take part in a save, non-chiefs into a directory of their own). A non-chief's save goes to
a private temporary directory that is deleted at once; every worker restores from the
chief's checkpoints (``output_dir`` must be storage they all read, as in TF). The workers'
input positions travel in the chief's checkpoint (:class:`~t2t_repro.training.loop.input_feed.
WorkerPositions`).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.errors import CheckpointError, retired_layout
from t2t_repro.checkpoints.loading import MODEL_KEY, checkpoint_reader

INPUT_KEY = "input_iterator"


class TrainingCheckpoint:
    def __init__(
        self,
        output_dir: str,
        model,
        optimizer,
        keep_checkpoint_max: int = 20,
        is_chief: bool = True,
        keep_checkpoint_every_n_hours: float | None = None,
    ) -> None:
        self.output_dir = output_dir
        self.is_chief = is_chief
        self.keep_checkpoint_max = keep_checkpoint_max
        # T2T's --keep_checkpoint_every_n_hours (10000: in effect never): one checkpoint per
        # that many hours is kept beyond keep_checkpoint_max (tf.train.CheckpointManager).
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.batches_consumed = tf.Variable(
            0, dtype=tf.int64, trainable=False, name="batches_consumed"
        )
        # The global batch, as micro-batches per update (replicas x accumulation steps): a
        # resume keeps it on any number of replicas (training/cluster/resume_layout.py).
        self.micro_batches = tf.Variable(
            0, dtype=tf.int64, trainable=False, name="micro_batches_per_update"
        )
        # T2T global steps (batches) per update, so the step a checkpoint is named by is
        # T2T's (training/loop/step_count.py). Attached after a restore: a checkpoint saved
        # before it existed restores, and leaves it 0 (saved_steps_per_update).
        self.steps_per_update = tf.Variable(
            0, dtype=tf.int64, trainable=False, name="steps_per_update"
        )
        self.saved_steps_per_update = 0
        # Dropout's random-number states: restoring them makes a resumed run bit-identical.
        self.rng_states = tf.Module(name="rng_states")
        for i, variable in enumerate(v for v in model.variables if "seed_generator" in v.path):
            setattr(self.rng_states, f"state_{i}", variable)
        self.checkpoint = tf.train.Checkpoint(
            **{MODEL_KEY: model},
            optimizer=optimizer,
            batches_consumed=self.batches_consumed,
            micro_batches_per_update=self.micro_batches,
            rng_states=self.rng_states,
        )
        self.optimizer = optimizer
        self.manager = None  # made by restore_latest, after the directory was checked
        self.restored: str | None = None
        self._written: set[str] = set()
        self._latest_elsewhere: str | None = None

    @property
    def latest(self) -> str | None:
        if not self.is_chief:  # the chief's newest, which this worker saved along with it
            return self._latest_elsewhere
        return self.manager.latest_checkpoint if self.manager else None

    def restore_latest(self, log=print, found=lambda: None) -> str | None:
        """Restores the newest complete checkpoint on disk, if any; returns its path.

        When the state file is unreadable or disagrees with the disk, says so and writes a
        correct one (the unreadable one is kept as ``checkpoint.unreadable``). ``found()``
        runs once ``latest`` names it, before the restore reads it (a watchdog's line).
        """
        path, note = checkpoint_files.latest_checkpoint(self.output_dir)
        self._latest_elsewhere = path
        if note and self.is_chief:
            log(f"warning: {note}")
            complete = [p for _, p in checkpoint_files.complete_checkpoints(self.output_dir)]
            checkpoint_files.write_state(self.output_dir, complete)
        self.manager = self._make_manager()
        found()
        if path is None:
            self._attach_steps_per_update()
            return None
        try:
            # Kept: objects attached later (the input iterator) restore from it on attachment.
            self._status = self.checkpoint.restore(path)
            self._status.assert_existing_objects_matched()
        except (AssertionError, ValueError, IndexError, tf.errors.OpError) as e:
            if why := retired_layout(str(e)):
                raise CheckpointError(f"Cannot resume from {path!r}: {why}.") from None
            raise CheckpointError(
                f"Cannot resume from {path!r}: {_first_line(e)}. The checkpoint was written "
                "with other hparams (a --hparams value that changes a shape cannot resume it: "
                "leave it out, or use a new --output_dir), or it is corrupt (move the broken "
                f"{os.path.basename(path)}.* files away so the previous checkpoint is used)."
            ) from None
        self._attach_steps_per_update()  # restored on attachment when the checkpoint has it
        self.saved_steps_per_update = int(self.steps_per_update.numpy())
        self.restored = path
        return path

    def _attach_steps_per_update(self) -> None:
        self.checkpoint.steps_per_update = self.steps_per_update

    def leave_unrestored(self) -> None:
        """The restored checkpoint's objects this run does not attach (another cluster
        shape's input positions) are left alone, without TensorFlow's warning at exit."""
        self._status.expect_partial()

    def _make_manager(self) -> tf.train.CheckpointManager:
        return tf.train.CheckpointManager(
            self.checkpoint,
            self.output_dir,
            max_to_keep=self.keep_checkpoint_max or None,  # T2T's 0: keep every checkpoint
            keep_checkpoint_every_n_hours=self.keep_checkpoint_every_n_hours,
            checkpoint_name="ckpt",
        )

    def has_input_state(self) -> bool:
        """Whether the restored checkpoint holds the input iterator's state."""
        return self.restored is not None and any(
            name.startswith(INPUT_KEY + "/")
            for name in checkpoint_reader(self.restored).get_variable_to_shape_map()
        )

    def saved_shape(self, name: str) -> list[int] | None:
        """The shape of the variable ``name`` in the restored checkpoint (None: not in it)."""
        if self.restored is None:
            return None
        key = f"{name}/.ATTRIBUTES/VARIABLE_VALUE"
        return checkpoint_reader(self.restored).get_variable_to_shape_map().get(key)

    def track_input(self, iterator) -> None:
        """Saves ``iterator`` with every checkpoint; restores its state now if the restored
        checkpoint has one (TensorFlow's deferred restoration on attachment)."""
        setattr(self.checkpoint, INPUT_KEY, iterator)

    def save(self, step: int) -> str:
        """Saves as ``ckpt-<step>``: ``step`` is T2T's global step (step_count.py)."""
        self._attach_steps_per_update()
        prefix = os.path.join(self.output_dir, f"ckpt-{step}")
        if not self.is_chief:
            return self._save_elsewhere(prefix)
        if fileio.exists(prefix + ".index") and prefix not in self._written:
            raise CheckpointError(
                f"{prefix} already exists and this run did not write it; not overwriting it. "
                "Use a new --output_dir, or move that checkpoint away."
            )
        if self.manager is None:  # A new directory (e.g. t2t-import's): nothing to resume.
            if checkpoint_files.complete_checkpoints(self.output_dir):
                raise CheckpointError(
                    f"{self.output_dir} holds checkpoints: call "
                    "restore_latest before saving into it."
                )
            self.manager = self._make_manager()
        path = self.manager.save(checkpoint_number=step)
        self._written.add(path)
        return path

    def _save_elsewhere(self, prefix: str) -> str:
        """A non-chief's part of a save: into a private temp dir, deleted at once."""
        private = tempfile.mkdtemp(prefix="t2t-worker-save-")
        try:
            self.checkpoint.write(os.path.join(private, "ckpt"))
        finally:
            shutil.rmtree(private, ignore_errors=True)
        return prefix

    def chief_saved(self, prefix: str) -> None:
        """A non-chief's ``latest`` once the chief said its save of ``prefix`` is complete."""
        self._latest_elsewhere = prefix


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
