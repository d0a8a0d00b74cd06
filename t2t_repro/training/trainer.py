"""The training loop behind ``t2t-trainer``: schedules, checkpoints, eval, logging, failures.

Updates run in ``tf.function`` loops of up to ``steps_per_loop`` steps; between loops the
host logs, saves checkpoints (every ``save_checkpoints_secs`` or ``local_eval_frequency``
steps), evaluates, and reacts to SIGINT/SIGTERM (save, then exit cleanly). A NaN/Inf loss
stops training at once without saving the bad state, so the last good checkpoint is kept;
so does a loss above ``train_step.DIVERGED_LOSS`` (diverged without becoming NaN yet).

Every check (flags, hparams, the saved run's hparams, the resume checkpoint) runs before
anything is written to ``output_dir``: a run that fails them leaves the directory as it was.
On resume, the model, the optimizer (and its step), the RNG states and the input iterator's
state are restored from the newest complete checkpoint, so the next batch is the one an
uninterrupted run would have read, in constant time (:mod:`t2t_repro.training.loop.input_feed`).
A new run may instead start from another run's model weights (``warm_start.py``); early
stopping (``early_stopping.py``) decides at the evaluations, agreed by all workers.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter

import tensorflow as tf

from t2t_repro import fileio, registry
from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.training import TrainingCheckpoint
from t2t_repro.data.input_pipeline import TRAIN, fixed_batch_per_replica, make_dataset
from t2t_repro.learning_rate import t2t_steps_per_update
from t2t_repro.optimizers import make_optimizer
from t2t_repro.optimizers.loss_scale import loss_scaled, scales_loss
from t2t_repro.training import warm_start
from t2t_repro.training.cluster.agreement import Agreement
from t2t_repro.training.cluster.chief_work import ChiefWork
from t2t_repro.training.cluster.devices import announce
from t2t_repro.training.cluster.distribution import cluster, make_strategy
from t2t_repro.training.cluster.exit_codes import resume_text
from t2t_repro.training.cluster.resume_layout import lay_out_updates, resharded_seed
from t2t_repro.training.cluster.startup_handshake import handshake, refuse_on_a_cluster, worker_seed
from t2t_repro.training.cluster.watchdog import Watchdog
from t2t_repro.training.config import READ_ONLY_SCHEDULES, TrainerConfig
from t2t_repro.training.loop import schedules, step_count
from t2t_repro.training.loop.early_stopping import make_early_stopping
from t2t_repro.training.loop.eval_round import EvalRound
from t2t_repro.training.loop.input_feed import positioned_feed
from t2t_repro.training.loop.run_errors import diverged_error, raise_data_stop
from t2t_repro.training.loop.step_count import crossed
from t2t_repro.training.loop.summaries import ConsoleLog, Summaries, window_scalars
from t2t_repro.training.loop.train_step import TrainMetrics, make_train_loop
from t2t_repro.training.output_dir import write_record
from t2t_repro.training.run_hparams import run_hparams
from t2t_repro.training.run_setup import (
    StopFlag,
    TrainingError,
    built_model,
    check_config,
    datagen_flags,
    setup_precision,
    setup_runtime,
    setup_seed,
)


class Trainer:
    def __init__(self, cfg: TrainerConfig, flags: dict | None = None) -> None:
        check_config(cfg)  # Names and overrides first: a typo is reported before any file.
        self.cluster = cluster()
        refuse_on_a_cluster(cfg, self.cluster)
        # Then the strategy, before any TensorFlow op runs: MultiWorkerMirroredStrategy
        # cannot be made once TensorFlow has started (distribution.py says why).
        setup_runtime(
            cfg.inter_op_parallelism_threads,
            cfg.intra_op_parallelism_threads,
            cfg.log_device_placement,
        )
        self.strategy = make_strategy(cfg.worker_gpu, cfg.devices, cfg.collective_timeout_secs)
        # Every stage of a cluster run watched (watchdog.py), the chief's own work apart.
        self.ckpt = self.optimizer = self._saving = None
        self.watchdog = Watchdog(
            self.cluster.workers > 1,
            cfg.collective_timeout_secs,
            lambda: self._resume_point(),
            progress=lambda: 0 if self.optimizer is None else self.step,
        )
        self.chief_work = ChiefWork(
            self.strategy, self.cluster, self.watchdog, cfg.collective_timeout_secs
        )
        if not cfg.generate_data and not fileio.isdir(cfg.data_dir):
            raise TrainingError(
                f"--data_dir {cfg.data_dir} does not exist: run t2t-datagen "
                "first or pass --generate_data (with --tmp_dir)."
            )
        self.cfg = cfg
        self.flags = flags or dataclasses.asdict(cfg)
        setup_seed(cfg)
        self.problem = registry.problem(cfg.problem)
        if cfg.schedule == "train_eval_and_decode":
            self.problem.check_split_decodes()
        if cfg.generate_data:
            made = self.problem.generate_data(cfg.data_dir, cfg.tmp_dir, **datagen_flags(cfg))
            print(made.format(), flush=True)
        with self.watchdog.stage("start-up: reading the saved hparams and the vocabulary"):
            self.hparams = hp = run_hparams(cfg, self.problem)
            self.early_stopping = make_early_stopping(cfg, self.problem, hp)  # None: not asked for
            self.augment = self.problem.train_augmentation(
                cfg.data_dir, hp, worker_seed(cfg.random_seed, self.cluster.index)
            )
        # T2T's activation_dtype too; the flag --gpu_automatic_mixed_precision sets T2T's hparam
        auto = bool(self.flags.get("gpu_automatic_mixed_precision"))
        self.cfg = cfg = setup_precision(cfg, hp, gpu_automatic_mixed_precision=auto)
        # Batches per update, the global step counting batches, as T2T's (step_count.py).
        self.steps_per_update = t2t_steps_per_update(
            hp.optimizer, hp.optimizer_multistep_accumulate_steps
        )
        if cfg.schedule not in READ_ONLY_SCHEDULES:
            step_count.check_train_steps(self.steps_per_update, *schedules.training_end(cfg))
        if hp.use_fixed_batch_size:  # its replicas must divide it: refused before any write
            replicas = self.strategy.num_replicas_in_sync
            fixed_batch_per_replica(
                hp.batch_size, tf.distribute.InputContext(self.cluster.workers, 0, replicas)
            )
        self.accumulate = self.steps_per_update  # per replica; a reshard may raise it
        self.resharded = False  # resumed on another number of workers (--reshard_on_resume)
        announce(self.strategy, cfg.mixed_precision, cfg.xla, scales_loss(hp))
        with self.strategy.scope():
            self.model = built_model(cfg.model, hp, cfg.schedule)
            optimizer = make_optimizer(hp)
            if cfg.mixed_precision == "float16":  # T2T's loss scaler, or Keras's
                optimizer = loss_scaled(optimizer, hp)
            self.optimizer = optimizer
            self.optimizer.build(self.model.trainable_variables)
            self.metrics = TrainMetrics()
        self.ckpt = TrainingCheckpoint(
            cfg.output_dir,
            self.model,
            self.optimizer,
            cfg.keep_checkpoint_max,
            is_chief=self.cluster.is_chief,
            keep_checkpoint_every_n_hours=cfg.keep_checkpoint_every_n_hours,
        )
        self.positions = None  # every worker's input position, on several workers
        self.summaries = None  # made once the run passed its checks (it writes event files)
        self.evals = EvalRound(self)
        self.warm_started = None  # {"source": the checkpoint, "weights": their digest}

    # -- data ------------------------------------------------------------------------------
    def _train_iterator(self):
        """The input, positioned after the batches the restored checkpoint consumed
        (``input_feed.positioned_feed``; checkpoints without an input state skip them)."""
        pattern = self.problem.filepattern(self.cfg.data_dir, "train")
        saved_state = self.ckpt.has_input_state() or self.cluster.workers > 1
        skip = 0 if saved_state or self.resharded else int(self.ckpt.batches_consumed.numpy())

        def dataset_fn(ctx=None):
            ds = make_dataset(
                pattern,
                TRAIN,
                self.hparams,
                input_context=ctx,
                length_multiplier=self.problem.batch_size_multiplier,
                seed=self.data_seed,
                augment=self.augment,
                max_length=self.problem.max_length(self.hparams),
                read_example=self.problem.read_example_fn(TRAIN, self.hparams),
            )
            return ds.skip(skip) if skip else ds

        feed, self.positions = positioned_feed(
            self.strategy, self.ckpt, self.cluster, dataset_fn, skip, restore=not self.resharded
        )
        return feed

    # -- pieces ----------------------------------------------------------------------------
    @property
    def updates(self) -> int:
        return int(self.optimizer.iterations.numpy())

    @property
    def step(self) -> int:
        """T2T's global step: batches, ``steps_per_update`` per update (step_count.py)."""
        return self.updates * self.steps_per_update

    def save(self) -> str:
        """Every worker calls it at the same step (the chief's copy is the one kept)."""
        self.ckpt.batches_consumed.assign(self.updates * self.accumulate)
        self.ckpt.micro_batches.assign(self.strategy.num_replicas_in_sync * self.accumulate)
        self.ckpt.steps_per_update.assign(self.steps_per_update)
        if self.positions is not None:
            with self.watchdog.stage("gathering the input positions to save", waits_for_peers=True):
                self.positions.gather()
        stage, step = f"checkpoint save of step {self.step}", self.step
        self._saving = step
        try:
            if self.cluster.is_chief:  # the others wait for its write outside collectives
                return self.chief_work(stage, lambda: self.ckpt.save(step))
            with self.watchdog.stage(stage):  # its private copy (TensorFlow's rule), the wait
                path = self.ckpt.save(step)
            self.chief_work(stage, lambda: None)
            self.ckpt.chief_saved(path)
            return path
        finally:
            self._saving = None

    def _resume_point(self) -> str:
        """Where a restart of the whole cluster resumes, as a stuck worker's line says it
        (from what this worker knows, without reading a file): the chief's newest complete
        checkpoint. A non-chief that is saving cannot know whether the chief finished."""
        ckpt = self.ckpt
        if ckpt is None or ckpt.manager is None:  # the checkpoints are not listed yet
            return f"it resumes from the newest complete checkpoint in {self.cfg.output_dir}"
        if self._saving is None or self.cluster.is_chief:
            return resume_text(ckpt.latest)
        saving = os.path.join(self.cfg.output_dir, f"ckpt-{self._saving}")
        return f"it resumes from {saving} if the chief finished writing it, else from " + (
            ckpt.latest or "step 0"
        )

    def _saved(self, path: str) -> str:
        """What this worker tells of a save (only the chief writes: TrainingCheckpoint.save)."""
        return f"saved {path}" if self.cluster.is_chief else f"the chief saved {path}"

    def _expected_path(self) -> str:
        return os.path.join(self.cfg.output_dir, f"ckpt-{self.step}")

    def evaluate(self) -> dict:
        return self.evals.evaluate()

    def _learning_rate(self) -> float:
        lr = self.optimizer.learning_rate
        return float(lr(self.optimizer.iterations) if callable(lr) else lr)

    # -- schedules -------------------------------------------------------------------------
    def _start_writing(self) -> None:
        """After the last check (the workers agree, ``startup_handshake``): the run record,
        stale temp dirs, event files. Only the chief writes into output_dir; other workers'
        event writers write nothing."""
        self.data_seed = handshake(self)
        self.chief_work.prepare()
        if self.resharded:
            self.data_seed = resharded_seed(self.data_seed, self.updates)
        self.chief_work("start-up: writing the run record", self._write_record)
        with self.watchdog.stage("start-up: opening the event files"):
            self.summaries = Summaries(self.cfg.output_dir, write=self.cluster.is_chief)

    def _write_record(self) -> None:
        """The chief's: hparams.json and flags.txt, stale temp dirs removed."""
        if self.cfg.schedule not in READ_ONLY_SCHEDULES:
            write_record(self.cfg.output_dir, self.hparams, self.flags)
            for path in checkpoint_files.remove_orphan_temp_dirs(self.cfg.output_dir):
                print(f"removed {path} (left by a save that was interrupted)", flush=True)

    def start(self) -> str | None:
        """Resumes from output_dir's newest checkpoint (returned) or warm-starts a new run,
        then starts writing: every check that can refuse the run comes before."""
        with self.watchdog.stage(
            f"start-up: restoring the newest checkpoint of {self.cfg.output_dir}"
        ):
            restored = self.ckpt.restore_latest(found=self.watchdog.refresh)
            if restored and self.cfg.schedule not in READ_ONLY_SCHEDULES:
                step_count.announce_restored_meaning(self, restored)
                lay_out_updates(self, restored)
        cfg = self.cfg
        if restored:
            print(f"resumed from {restored} at step {self.step}", flush=True)
            if self.early_stopping is not None:
                written = schedules.eval_writers(cfg.schedule, False, cfg.standalone_eval)[0]
                self.early_stopping.read_history(self.cfg.output_dir, self.step, written)
        if self.cfg.warm_start_from:  # flags.txt records the exact checkpoint
            with self.watchdog.stage(f"start-up: warm start from {cfg.warm_start_from}"):
                source = warm_start.start_from(
                    cfg.warm_start_from,
                    restored,
                    self.model,
                    self.hparams,
                    self.problem,
                    cfg.data_dir,
                )
                if not restored:  # the workers compare it (startup_handshake.py)
                    self.warm_started = warm_start.loaded(source, self.model)
            self.flags = dict(self.flags, warm_start_from=source)
        self._start_writing()
        return restored

    def run(self) -> dict:
        restored = self.start()
        if self.cfg.schedule == "evaluate":
            if not restored:
                raise TrainingError(f"No checkpoint in {self.cfg.output_dir} to evaluate.")
            return self.evaluate()
        if self.cfg.schedule == "continuous_eval":
            return self.continuous_eval()
        if self.cfg.schedule == "decode":
            if not restored:
                raise TrainingError(f"No checkpoint in {self.cfg.output_dir} to decode.")
            return {"decodes": self.evals.decode_split()}
        return self.train()

    def continuous_eval(self) -> dict:
        """Evaluates each new checkpoint but a step-0 one until none came for
        --eval_timeout_mins, whatever its step (T2T's T2TExperiment.continuous_eval and
        next_checkpoint: -1 waits forever, <0 no wait); t2t-eval's step-0 one too."""
        results, last, cfg = {}, None, self.cfg
        timeout = None if cfg.eval_timeout_mins == -1 else cfg.eval_timeout_mins * 60
        for path in tf.train.checkpoints_iterator(cfg.output_dir, timeout=timeout):
            if path != last and (cfg.standalone_eval or not path.endswith("-0")):
                self.ckpt.checkpoint.restore(path).expect_partial()
                results, last = self.evaluate(), path
        return results

    def train(self) -> dict:
        cfg = self.cfg
        if self.step == 0:
            self.summaries.hparams_text(self.hparams, 0)
        loop = make_train_loop(
            self.strategy,
            self.model,
            self.optimizer,
            self.hparams,
            self.metrics,
            self.accumulate,
            cfg.xla,
        )
        with self.watchdog.stage("start-up: opening the training data"):
            iterator = self._train_iterator()
        self.last_step, self.origin = schedules.train_span(cfg, self.step)
        console = ConsoleLog(self.last_step)
        hp, replicas = self.hparams, self.strategy.num_replicas_in_sync
        print(schedules.batch_line(hp, replicas, self.accumulate, self.cluster.workers), flush=True)
        if cfg.xla and not (hp.get("padded_bucket_step", 0) or hp.use_fixed_batch_size):
            print(
                "--xla compiles the step once per batch shape, and T2T's length buckets make "
                "dozens; --hparams=padded_bucket_step=1.2 pads batches to a few lengths "
                "(README: XLA and batch shapes)",
                flush=True,
            )
        stop = StopFlag()
        stop.install()
        try:
            return self._train_loop(loop, iterator, console, stop)
        finally:
            stop.restore()

    def _train_loop(self, loop, iterator, console, stop) -> dict:
        """Loop calls up to the next log/save/eval step; between calls the workers agree on
        what to do (``Agreement``), so all of them save, evaluate and stop at the same step."""
        cfg = self.cfg
        eval_every = schedules.eval_every(cfg)
        poll_every = schedules.early_stopping_poll_every(cfg)  # another job's eval events
        save_every = schedules.checkpoint_every(cfg)
        agree = Agreement(self.strategy, self.cluster.workers)
        started = last_save = time.time()
        throttle = schedules.EvalThrottle(cfg.eval_throttle_seconds)
        if cfg.max_train_seconds:
            console.deadline = started + cfg.max_train_seconds
        window, results, stopping, traced, early = Counter(), {}, False, False, False
        while self.step < self.last_step and not stopping and not early:
            n = self._steps_to_next_event(eval_every or poll_every, save_every)
            before = self.step - self.origin  # events count from origin (train_span)
            stats = self._run_loop(loop, iterator, n)
            window.update(stats)
            if traced:  # The first call traced the loop: its time says nothing about speed.
                window.update(timed_seconds=stats["seconds"], timed_updates=stats["updates"])
            traced = True
            now, step, at = time.time(), self.step, self.step - self.origin
            decided = agree(
                signal=stop.signal is not None,
                time_up=bool(cfg.max_train_seconds) and now - started >= cfg.max_train_seconds,
                save_due=bool(cfg.save_checkpoints_secs)
                and now - last_save >= cfg.save_checkpoints_secs,
                throttle_passed=throttle.passed(now),
            )
            # Only the agreed flags decide (a signal arriving after the vote waits one call).
            stopping = decided["signal"] or decided["time_up"]
            self.signalled = decided["signal"]  # its exit code: exit_codes.py
            if decided["time_up"] and not decided["signal"]:
                stop.signal = "the --max_train_seconds limit"
            elif decided["signal"] and stop.signal is None:
                stop.signal = "a stop signal on another worker"
            if crossed(before, at, cfg.log_step_count_steps) or step >= self.last_step:
                self._log_window(window, console)
                window = Counter()
            if stopping:
                break
            saves = decided["save_due"] or crossed(before, at, save_every)
            if saves:
                print(self._saved(self.save()), flush=True)
                last_save = time.time()
            if schedules.eval_due(cfg, before, at, bool(saves), decided["throttle_passed"]):
                if not saves:
                    self.save()
                throttle.started(time.time())
                results = self.evals.round()
                if self.early_stopping is not None:  # agreed: a dev decode metric is the chief's
                    early = agree(stop=self.early_stopping.update(step, results))["stop"]
            elif crossed(before, at, poll_every):
                early = agree(stop=self.early_stopping.poll(cfg.output_dir))["stop"]
        path = self.ckpt.latest if self.ckpt.latest == self._expected_path() else self.save()
        if stopping:
            print(
                f"received {stop.signal}: {self._saved(path)} at step {self.step}; "
                + schedules.resume_hint(self.cfg, self.last_step - self.step),
                flush=True,
            )
            return {"interrupted": True, "checkpoint": path}
        if early:
            why = self.early_stopping.reason()
            print(f"stopped early at step {self.step}: {why}; {self._saved(path)}", flush=True)
            return dict(results, checkpoint=path, early_stopped=True)
        print(f"training finished at step {self.step}; {self._saved(path)}", flush=True)
        if cfg.schedule in schedules.EVALUATING:
            results = self.evals.final(results)
        return dict(results, checkpoint=path)

    def _steps_to_next_event(self, eval_every: int, save_every: int) -> int:
        """Updates in the next loop call: up to the next log line, save, eval or the end."""
        cfg = self.cfg
        return step_count.updates_to_next_event(
            self.step - self.origin,
            self.steps_per_update,
            self.last_step - self.origin,
            cfg.steps_per_loop,
            (cfg.log_step_count_steps, eval_every, save_every),
        )

    def _run_loop(self, loop, iterator, n: int) -> dict:
        """One loop call of ``n`` updates: its metrics and seconds (a NaN loss raises)."""
        self.metrics.reset()
        start = time.time()
        try:
            with self.watchdog.stage("training loop", waits_for_peers=True, steps=True):
                loop(iterator, tf.constant(n))
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as e:
            raise_data_stop(e, self.problem, self.cfg.data_dir, "train", self.ckpt.latest)
        stats = self.metrics.read()
        if stats["first_nonfinite"] >= 0:  # the update's T2T step
            stats["first_nonfinite"] = int(stats["first_nonfinite"]) * self.steps_per_update
            raise diverged_error(stats, self.ckpt.latest)
        return {name: stats[name] for name in self.metrics.names} | {"seconds": time.time() - start}

    def _log_window(self, w: dict, console: ConsoleLog) -> None:
        if not w["updates"]:
            return
        values = window_scalars(w, self._learning_rate(), self.hparams, self.steps_per_update)
        self.summaries.scalars("train", values, self.step)
        timed = w["timed_updates"] / w["timed_seconds"] if w["timed_seconds"] else None
        console.line(
            self.step, values["loss"], values["learning_rate"], values["tokens_per_sec"], timed
        )
