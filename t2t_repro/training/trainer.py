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
uninterrupted run would have read, in constant time (:mod:`t2t_repro.training.input_feed`).
A new run may instead start from another run's model weights (``warm_start.py``); early
stopping (``early_stopping.py``) decides at the evaluations, agreed by all workers.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter

import keras
import tensorflow as tf

from t2t_repro import fileio, registry
from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.training import TrainingCheckpoint
from t2t_repro.data.input_pipeline import EVAL, TRAIN, make_dataset
from t2t_repro.hparams_lib import checks as hparams_checks
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.hparams_lib.renamed import former_hparams
from t2t_repro.learning_rate import make_optimizer
from t2t_repro.training import evaluation, schedules, warm_start
from t2t_repro.training.agreement import Agreement
from t2t_repro.training.attention_summary import AttentionSummary
from t2t_repro.training.config import READ_ONLY_SCHEDULES, TrainerConfig
from t2t_repro.training.dev_decodes import make_dev_decodes
from t2t_repro.training.devices import announce
from t2t_repro.training.distribution import cluster, make_strategy
from t2t_repro.training.early_stopping import make_early_stopping
from t2t_repro.training.input_feed import WorkerPositions, positioned_feed
from t2t_repro.training.output_dir import check_saved, saved_hparams, write_record
from t2t_repro.training.resume_layout import resharded_seed, resume_layout
from t2t_repro.training.run_errors import corrupt_data_error, diverged_error
from t2t_repro.training.run_setup import (
    StopFlag,
    TrainingError,
    check_config,
    setup_precision_and_seed,
    setup_runtime,
)
from t2t_repro.training.startup_handshake import handshake, refuse_on_a_cluster, worker_seed
from t2t_repro.training.summaries import ConsoleLog, Summaries, window_scalars
from t2t_repro.training.train_step import TrainMetrics, make_train_loop


def _with_train_steps(hp, train_steps: int):
    """The run's hparams record its --train_steps (T2T's hparams.json has it too)."""
    if "train_steps" not in hp:
        hp.add_hparam("train_steps", train_steps)
    hp.set_hparam("train_steps", train_steps)
    return hp


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
        if not cfg.generate_data and not fileio.isdir(cfg.data_dir):
            raise TrainingError(
                f"--data_dir {cfg.data_dir} does not exist: run t2t-datagen "
                "first or pass --generate_data (with --tmp_dir)."
            )
        self.cfg = cfg
        self.flags = flags or dataclasses.asdict(cfg)
        setup_precision_and_seed(cfg)
        self.problem = registry.problem(cfg.problem)
        if cfg.generate_data:
            print(self.problem.generate_data(cfg.data_dir, cfg.tmp_dir).format(), flush=True)
        saved = saved_hparams(cfg.output_dir)
        problem_hparams = self.problem.problem_hparams(cfg.data_dir)
        hp = _with_train_steps(
            create_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams), cfg.train_steps
        )
        hparams_checks.validate(hp, training=True)
        if cfg.schedule in READ_ONLY_SCHEDULES and saved is not None:
            hp = saved
        elif saved is not None:  # a run saved before its set's values changed resumes
            former = former_hparams(cfg.hparams_set, cfg.hparams, **problem_hparams)
            if former is not None:
                former = _with_train_steps(former, cfg.train_steps)
            hp = check_saved(cfg.output_dir, hp, cfg.hparams_set, former)
        self.hparams = hp
        self.early_stopping = make_early_stopping(cfg, self.problem, hp)  # None: not asked for
        self.augment = self.problem.train_augmentation(
            cfg.data_dir, hp, worker_seed(cfg.random_seed, self.cluster.index)
        )
        self.accumulate = max(1, hp.optimizer_multistep_accumulate_steps)
        self.resharded = False  # resumed on another number of workers (--reshard_on_resume)
        announce(self.strategy, cfg.mixed_precision, cfg.xla)
        with self.strategy.scope():
            self.model = registry.model(cfg.model)(hp)
            self.model.build()
            optimizer = make_optimizer(hp)
            if cfg.mixed_precision == "float16":
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
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
        self.eval_fn = evaluation.make_eval_fn(self.strategy, self.model)
        self._attention = None  # the first dev example's heat maps, made at the first eval
        self._dev_decodes = False  # made at the first evaluation (None: the problem has none)
        self._split_decodes = None  # the decode schedules' dev-split decoder
        self.eval_split = "test" if cfg.eval_use_test_set else "dev"

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
            )
            return ds.skip(skip) if skip else ds

        feed, self.positions = positioned_feed(
            self.strategy, self.ckpt, self.cluster, dataset_fn, skip, restore=not self.resharded
        )
        return feed

    def _eval_dataset(self):
        pattern = self.problem.filepattern(self.cfg.data_dir, self.eval_split)
        return self.strategy.distribute_datasets_from_function(
            lambda ctx: make_dataset(
                pattern,
                EVAL,
                self.hparams,
                input_context=ctx,
                length_multiplier=self.problem.batch_size_multiplier,
            )
        )

    # -- pieces ----------------------------------------------------------------------------
    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def save(self) -> str:
        """Every worker calls it at the same step (the chief's copy is the one kept)."""
        self.ckpt.batches_consumed.assign(self.step * self.accumulate)
        self.ckpt.micro_batches.assign(self.strategy.num_replicas_in_sync * self.accumulate)
        if self.positions is not None:
            self.positions.gather()
        return self.ckpt.save(self.step)

    def _saved(self, path: str) -> str:
        """What this worker tells of a save: other workers took part in it, but wrote
        nothing into output_dir (``TrainingCheckpoint.save``)."""
        return f"saved {path}" if self.cluster.is_chief else f"the chief saved {path}"

    def _expected_path(self) -> str:
        return os.path.join(self.cfg.output_dir, f"ckpt-{self.step}")

    def evaluate(self) -> dict:
        try:
            results = evaluation.evaluate(self.eval_fn, self._eval_dataset(), self.cfg.eval_steps)
        except tf.errors.DataLossError:
            raise corrupt_data_error(
                self.problem, self.cfg.data_dir, self.eval_split, self.ckpt.latest
            ) from None
        if not results["eval_tokens"]:  # an empty split: nothing to report (evaluation.py)
            pattern = self.problem.filepattern(self.cfg.data_dir, self.eval_split)
            return evaluation.skipped(self.step, pattern)
        dev_text = self._dev_scores(results) if self.cluster.is_chief else ""
        self.summaries.scalars(
            "eval", {k: v for k, v in results.items() if k != "eval_tokens"}, self.step
        )
        if self.cfg.attention_images and self.cluster.is_chief:
            if self._attention is None:
                self._attention = AttentionSummary(self.problem, self.cfg.data_dir, self.hparams)
            self.summaries.images("eval", self._attention.images(self.model), self.step)
        print(
            f"eval at step {self.step}: loss {results['loss']:.4f}, perplexity "
            f"{results['perplexity']:.3f}, accuracy {results['accuracy']:.4f}, "
            f"per-sequence {results['accuracy_per_sequence']:.4f}{dev_text}",
            flush=True,
        )
        return dict(results, step=self.step)

    def _dev_scores(self, results: dict) -> str:
        """The problem's dev metric of real decodes (``dev_decodes``) into ``results``; its
        log text ("" when the problem has no dev metric or ``eval_decode_examples`` is 0)."""
        if self._dev_decodes is False:
            self._dev_decodes = make_dev_decodes(
                self.model,
                self.problem,
                self.cfg.data_dir,
                self.hparams,
                self.cfg.eval_decode_examples,
                random_seed=self.cfg.random_seed or 0,
            )
        if self._dev_decodes is None:
            return ""
        scores = self._dev_decodes()
        results.update(scores)
        return self._dev_decodes.metric.log_text(scores)

    def _learning_rate(self) -> float:
        lr = self.optimizer.learning_rate
        return float(lr(self.optimizer.iterations) if callable(lr) else lr)

    # -- schedules -------------------------------------------------------------------------
    def _start_writing(self) -> None:
        """After the last check (the workers agree, ``startup_handshake``): the run record,
        stale temp dirs, event files. Only the chief writes into output_dir; other workers'
        event writers write nothing."""
        self.data_seed, self.watchdog = handshake(self)
        if self.resharded:
            self.data_seed = resharded_seed(self.data_seed, self.step)
        chief = self.cluster.is_chief
        if chief and self.cfg.schedule not in READ_ONLY_SCHEDULES:
            write_record(self.cfg.output_dir, self.hparams, self.flags)
            for path in checkpoint_files.remove_orphan_temp_dirs(self.cfg.output_dir):
                print(f"removed {path} (left by a save that was interrupted)", flush=True)
        self.summaries = Summaries(self.cfg.output_dir, write=chief)

    def start(self) -> str | None:
        """Resumes from output_dir's newest checkpoint (returned) or warm-starts a new run,
        then starts writing: every check that can refuse the run comes before."""
        restored = self.ckpt.restore_latest()
        if restored and self.cfg.schedule not in READ_ONLY_SCHEDULES:
            self._lay_out_updates(restored)
        if restored:
            print(f"resumed from {restored} at step {self.step}", flush=True)
            if self.early_stopping is not None:
                self.early_stopping.read_history(self.cfg.output_dir, self.step)
        if self.cfg.warm_start_from:  # flags.txt records the exact checkpoint
            cfg = self.cfg
            source = warm_start.start_from(
                cfg.warm_start_from, restored, self.model, self.hparams, self.problem, cfg.data_dir
            )
            self.flags = dict(self.flags, warm_start_from=source)
        self._start_writing()
        return restored

    def _lay_out_updates(self, restored: str) -> None:
        """The restored checkpoint's global batch on this run's replicas; another number of
        workers is refused unless --reshard_on_resume (``resume_layout.py``)."""
        shape = self.ckpt.saved_shape(WorkerPositions.KEY)
        saved_workers = shape[0] if shape else 1
        layout = resume_layout(
            restored,
            saved_workers,
            int(self.ckpt.micro_batches.numpy()),
            self.cluster.workers,
            self.strategy.num_replicas_in_sync,
            self.accumulate,
            self.cfg.reshard_on_resume,
        )
        self.accumulate, self.resharded = layout.accumulate, layout.reshard
        if layout.reshard:
            self.ckpt.leave_unrestored()
        if layout.note:
            print(layout.note, flush=True)

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
            return {"decodes": self._decode_split()}
        return self.train()

    def continuous_eval(self) -> dict:
        """Evaluates every new checkpoint until one at train_steps, or until none came for
        --eval_timeout_mins (T2T's)."""
        results, last = {}, None
        timeout = self.cfg.eval_timeout_mins * 60
        for path in tf.train.checkpoints_iterator(self.cfg.output_dir, timeout=timeout):
            if path != last:
                self.ckpt.checkpoint.restore(path).expect_partial()
                results, last = self.evaluate(), path
            if self.step >= self.cfg.train_steps:
                break
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
        iterator = self._train_iterator()
        console = ConsoleLog(cfg.train_steps)
        replicas = self.strategy.num_replicas_in_sync
        print(
            f"batch: {self.hparams.batch_size} tokens per replica x {replicas} replica(s) x "
            f"{self.accumulate} micro-batch(es) = up to "
            f"{self.hparams.batch_size * replicas * self.accumulate:,} tokens per update "
            "(padding included; TensorBoard's effective_tokens_per_update counts real "
            "target tokens)",
            flush=True,
        )
        hp = self.hparams
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
        save_every = 0 if cfg.save_checkpoints_secs else cfg.local_eval_frequency
        agree = Agreement(self.strategy, self.cluster.workers)
        started = last_save = time.time()
        last_eval = -float("inf")
        if cfg.max_train_seconds:
            console.deadline = started + cfg.max_train_seconds
        window, results, stopping, traced, early = Counter(), {}, False, False, False
        while self.step < cfg.train_steps and not stopping and not early:
            n = self._steps_to_next_event(eval_every or poll_every, save_every)
            stats = self._run_loop(loop, iterator, n)
            window.update(stats)
            if traced:  # The first call traced the loop: its time says nothing about speed.
                window.update(timed_seconds=stats["seconds"], timed_updates=stats["updates"])
            traced = True
            now, step = time.time(), self.step
            decided = agree(
                signal=stop.signal is not None,
                time_up=bool(cfg.max_train_seconds) and now - started >= cfg.max_train_seconds,
                save_due=bool(cfg.save_checkpoints_secs)
                and now - last_save >= cfg.save_checkpoints_secs,
                throttle_passed=now - last_eval >= cfg.eval_throttle_seconds,
            )
            # Only the agreed flags decide (a signal arriving after the vote waits one call).
            stopping = decided["signal"] or decided["time_up"]
            self.signalled = decided["signal"]  # its exit code: exit_codes.py
            if decided["time_up"] and not decided["signal"]:
                stop.signal = "the --max_train_seconds limit"
            elif decided["signal"] and stop.signal is None:
                stop.signal = "a stop signal on another worker"
            if step % cfg.log_step_count_steps == 0 or step >= cfg.train_steps:
                self._log_window(window, console)
                window = Counter()
            if stopping:
                break
            saves = decided["save_due"] or (save_every and step % save_every == 0)
            if saves:
                print(self._saved(self.save()), flush=True)
                last_save = time.time()
            if schedules.eval_due(cfg, step, bool(saves), decided["throttle_passed"]):
                if not saves:
                    self.save()
                results, last_eval = self._evaluate_and_decode(), time.time()
                if self.early_stopping is not None:  # agreed: a dev decode metric is the chief's
                    early = agree(stop=self.early_stopping.update(step, results))["stop"]
            elif poll_every and step % poll_every == 0:
                early = agree(stop=self.early_stopping.poll(cfg.output_dir))["stop"]
        path = self.ckpt.latest if self.ckpt.latest == self._expected_path() else self.save()
        if stopping:
            print(
                f"received {stop.signal}: {self._saved(path)} at step {self.step}; rerun the "
                "same command to resume.",
                flush=True,
            )
            return {"interrupted": True, "checkpoint": path}
        if early:
            why = self.early_stopping.reason()
            print(f"stopped early at step {self.step}: {why}; {self._saved(path)}", flush=True)
            return dict(results, checkpoint=path, early_stopped=True)
        print(f"training finished at step {self.step}; {self._saved(path)}", flush=True)
        if cfg.schedule in schedules.EVALUATING and not results.get("step") == self.step:
            results = self._evaluate_and_decode()
        return dict(results, checkpoint=path)

    def _evaluate_and_decode(self) -> dict:
        results = self.evaluate()
        if self.cfg.schedule == "train_eval_and_decode":
            results["decodes"] = self._decode_split()
        return results

    def _decode_split(self) -> str:
        """The dev split's decodes (``schedules.SplitDecodes``); the chief writes them."""
        if not self.cluster.is_chief:
            return ""
        if self._split_decodes is None:
            self._split_decodes = schedules.SplitDecodes(self.model, self.problem, self.cfg)
        text = self._split_decodes(self.step)
        print(text, flush=True)
        return self._split_decodes.paths.decodes

    def _steps_to_next_event(self, eval_every: int, save_every: int) -> int:
        """Updates in the next loop call: up to the next log line, save, eval or the end."""
        cfg, step = self.cfg, self.step
        every = [cfg.log_step_count_steps] + [e for e in (eval_every, save_every) if e]
        return min(cfg.steps_per_loop, cfg.train_steps - step, *(e - step % e for e in every))

    def _run_loop(self, loop, iterator, n: int) -> dict:
        """One loop call of ``n`` updates: its metrics and seconds (a NaN loss raises)."""
        self.metrics.reset()
        start = time.time()
        try:
            with self.watchdog:  # ends this process if it or its cluster is stuck
                loop(iterator, tf.constant(n))
        except tf.errors.DataLossError:
            raise corrupt_data_error(
                self.problem, self.cfg.data_dir, "train", self.ckpt.latest
            ) from None
        stats = self.metrics.read()
        if stats["first_nonfinite"] >= 0:
            raise diverged_error(stats, self.ckpt.latest)
        return {name: stats[name] for name in self.metrics.names} | {"seconds": time.time() - start}

    def _log_window(self, w: dict, console: ConsoleLog) -> None:
        if not w["updates"]:
            return
        values = window_scalars(w, self._learning_rate(), self.hparams)
        self.summaries.scalars("train", values, self.step)
        timed = w["timed_updates"] / w["timed_seconds"] if w["timed_seconds"] else None
        console.line(
            self.step, values["loss"], values["learning_rate"], values["tokens_per_sec"], timed
        )
