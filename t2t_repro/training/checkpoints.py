"""Training checkpoints: model, optimizer (with its step counter) and the input position.

``tf.train.CheckpointManager`` writes ``ckpt-<step>.*`` data files first and replaces the
``checkpoint`` state file last (atomically), so a run killed mid-save still resumes from the
previous checkpoint; a stray incomplete newer file is ignored because the state file never
pointed at it. The model sits under the key ``model`` that every reading tool uses.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.model_loading import MODEL_KEY, CheckpointError


class TrainingCheckpoint:
    def __init__(self, output_dir: str, model, optimizer, keep_checkpoint_max: int = 20) -> None:
        self.batches_consumed = tf.Variable(0, dtype=tf.int64, trainable=False,
                                            name="batches_consumed")
        # Dropout's random-number states: restoring them makes a resumed run bit-identical.
        self.rng_states = tf.Module(name="rng_states")
        for i, variable in enumerate(v for v in model.variables if "seed_generator" in v.path):
            setattr(self.rng_states, f"state_{i}", variable)
        self.checkpoint = tf.train.Checkpoint(**{MODEL_KEY: model}, optimizer=optimizer,
                                              batches_consumed=self.batches_consumed,
                                              rng_states=self.rng_states)
        self.manager = tf.train.CheckpointManager(self.checkpoint, output_dir,
                                                  max_to_keep=keep_checkpoint_max,
                                                  checkpoint_name="ckpt")
        self.optimizer = optimizer

    @property
    def latest(self) -> str | None:
        return self.manager.latest_checkpoint

    def restore_latest(self) -> str | None:
        """Restores the newest checkpoint if there is one; returns its path."""
        path = self.manager.latest_checkpoint
        if path is None:
            return None
        try:
            self.checkpoint.restore(path).assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError) as e:
            raise CheckpointError(
                f"Cannot resume from {path!r}: {str(e)[:1500]}\nThe checkpoint is corrupt or "
                "was written with other hparams; use a new --output_dir, or delete the broken "
                "ckpt files so the previous checkpoint is used.") from e
        return path

    def save(self, step: int) -> str:
        return self.manager.save(checkpoint_number=step)
