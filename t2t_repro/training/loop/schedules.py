"""When a training run evaluates and decodes, per T2T's ``--schedule``
(``tensor2tensor/utils/trainer_lib.py``, ``T2TExperiment``), and the decodes of the dev
split that ``decode`` and ``train_eval_and_decode`` write (``T2TExperiment.decode`` ->
``tensor2tensor/utils/decoding.py``, ``decode_from_dataset``)."""

from __future__ import annotations

from t2t_repro.training.config import TrainerConfig

# Evaluate every --local_eval_frequency steps (T2T's ValidationMonitor; train_eval_and_decode's
# loop of eval_freq_in_steps = --local_eval_frequency).
EVERY_N_STEPS = ("train_and_evaluate", "train_eval_and_decode")
# Evaluate at the end of training too: continuous_train_and_eval's evaluate() after
# Estimator's train_and_evaluate; train_eval_and_decode's rounds end with one. Not
# train_and_evaluate: T2T's ValidationMonitor evaluates only every N steps (its end() calls
# EveryN's no-op every_n_post_step; utils/trainer_lib.py, T2TExperiment.train_and_evaluate).
EVALUATING = ("train_eval_and_decode", "continuous_train_and_eval")


# Train without evaluating, and with --eval_early_stopping_steps read the eval events another
# job writes (output_dir/eval_continuous, eval_eval or eval: loop/early_stopping.py): T2T
# installs its
# EarlyStoppingHook on every schedule but its two local ones (tensor2tensor/utils/
# trainer_lib.py, create_experiment: use_early_stopping), checking every_n_steps =
# min_eval_frequency (--local_eval_frequency) steps.
READS_EVAL_EVENTS = ("train",)


def early_stopping_poll_every(cfg: TrainerConfig) -> int:
    """The step interval at which the run reads another job's eval events to decide early
    stopping (0: it does not)."""
    if cfg.eval_early_stopping_steps is None or cfg.schedule not in READS_EVAL_EVENTS:
        return 0
    return cfg.local_eval_frequency


# T2T's --iterations_per_loop default, which bin/t2t_trainer.py's create_run_config takes as
# the checkpoint interval when --local_eval_frequency is below it (max of the two)
T2T_ITERATIONS_PER_LOOP = 100


def eval_writers(schedule: str, final: bool = False, standalone: bool = False) -> tuple[str, ...]:
    """Where an evaluation's scalars go, as T2T 1.15's ``T2TExperiment`` writes them
    (``utils/trainer_lib.py``): ``evaluate``, ``continuous_eval`` and ``train_eval_and_decode``
    call ``Estimator.evaluate(name="eval")``, whose directory is ``eval_eval``;
    ``continuous_train_and_eval`` evaluates into ``eval`` (Estimator's train_and_evaluate), then
    once more at the end with ``evaluate()``, into ``eval_eval`` (the same checkpoint and data:
    the end's evaluation is written to both); ``train_and_evaluate``'s ValidationMonitor into
    ``eval``. Attention images stay in ``eval`` (T2T's ``eval_dir_name``). ``standalone``:
    t2t-eval's ``Estimator.evaluate()``, into ``eval``."""
    if standalone:
        return ("eval",)
    if schedule in ("evaluate", "continuous_eval", "train_eval_and_decode"):
        return ("eval_eval",)
    if schedule == "continuous_train_and_eval" and final:
        return ("eval", "eval_eval")
    return ("eval",)


class EvalThrottle:
    """--eval_throttle_seconds as Estimator's train_and_evaluate counts them: from the start
    of the last evaluation (tf.estimator's ``_NewCheckpointListener._evaluate`` updates its
    ``SecondOrStepTimer`` before it evaluates), so a long evaluation eats into the wait."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.last_start = seconds, None

    def passed(self, now: float) -> bool:
        """Whether an evaluation may start at ``now`` (always before the first)."""
        return self.last_start is None or now - self.last_start >= self.seconds

    def started(self, now: float) -> None:
        self.last_start = now


def checkpoint_every(cfg: TrainerConfig) -> int:
    """The step interval of checkpoints (0: by time, --save_checkpoints_secs): the one of
    evaluations, --local_eval_frequency; when that is 0 (no evaluations on a step count),
    T2T's 100, so a run without periodic evaluations still saves every 100 steps."""
    if cfg.save_checkpoints_secs:
        return 0
    return cfg.local_eval_frequency or T2T_ITERATIONS_PER_LOOP


def batch_line(hparams, replicas: int, accumulate: int, workers: int = 1) -> str:
    """The start-up line that says what a step reads: tokens per replica, or with
    ``use_fixed_batch_size`` examples per worker split over its replicas (T2T's meanings)."""
    if hparams.get("use_fixed_batch_size", False):
        examples = hparams.batch_size * workers * accumulate
        return (
            f"batch: {hparams.batch_size} examples per worker, split over its replicas, x "
            f"{workers} worker(s) x {accumulate} micro-batch(es) = {examples:,} examples per "
            "update (use_fixed_batch_size)"
        )
    return (
        f"batch: {hparams.batch_size} tokens per replica x {replicas} replica(s) x "
        f"{accumulate} micro-batch(es) = up to {hparams.batch_size * replicas * accumulate:,} "
        "tokens per update (padding included; TensorBoard's effective_tokens_per_update "
        "counts real target tokens)"
    )


def train_span(cfg: TrainerConfig, start: int) -> tuple[int, int]:
    """(the step this run trains to, the step its step-counted events count from) for a run
    that starts at step ``start``. --train_steps and 0, but for train_eval_and_decode, which
    T2T runs as ceil(train_steps / local_eval_frequency) rounds of training
    local_eval_frequency more steps, each then evaluated and decoded
    (``T2TExperiment.train_eval_and_decode``: ``Estimator.train(steps=...)`` counts from the
    step it starts at): a run resumed at step s trains to s + that many, every round counted
    from s."""
    if cfg.schedule != "train_eval_and_decode":
        return cfg.train_steps, 0
    every = cfg.local_eval_frequency
    return start + -(-cfg.train_steps // every) * every, start


def training_end(cfg: TrainerConfig) -> tuple[int, str]:
    """The step count a training run's end is a multiple of, and its flag: --train_steps, or
    under train_eval_and_decode its rounds' --local_eval_frequency (``train_span``)."""
    if cfg.schedule == "train_eval_and_decode":
        return cfg.local_eval_frequency, "--local_eval_frequency"
    return cfg.train_steps, "--train_steps"


def resume_hint(cfg: TrainerConfig, left: int) -> str:
    """What to run after a stop with ``left`` steps to go: the same command; under
    train_eval_and_decode, whose rerun trains --train_steps more (``train_span``), with
    --train_steps lowered to what is left, or, at its end, the evaluation and decodes the stop
    skipped."""
    if cfg.schedule != "train_eval_and_decode":
        return "rerun the same command to resume."
    rerun = (
        "under train_eval_and_decode a rerun trains --train_steps more, in rounds of "
        "--local_eval_frequency steps from the step it resumes at, as T2T's"
    )
    if left <= 0:
        return (
            "training is done, but its last evaluation and dev decodes did not run: "
            f"--schedule=evaluate and --schedule=decode run them ({rerun})."
        )
    left_text = f"to train the {left} steps left, rerun the same command with --train_steps={left}"
    return f"{left_text} ({rerun})."


def eval_every(cfg: TrainerConfig) -> int:
    """The step interval of evaluations (0: none on a step count)."""
    return cfg.local_eval_frequency if cfg.schedule in EVERY_N_STEPS else 0


def eval_due(
    cfg: TrainerConfig, previous: int, step: int, saved: bool, throttle_passed: bool
) -> bool:
    """Whether to evaluate after the loop call from ``previous`` to ``step`` (a multiple of
    --local_eval_frequency in between: ``step_count.crossed``). continuous_train_and_eval is
    Estimator's train_and_evaluate: after a checkpoint is saved, once
    ``--eval_throttle_seconds`` passed since the last eval (``throttle_passed``, which the
    workers agree on; true before the first eval)."""
    every = eval_every(cfg)
    if every:
        return step // every > previous // every
    return cfg.schedule == "continuous_train_and_eval" and saved and throttle_passed


class SplitDecodes:
    """Decodes the dev split's source text (from ``--tmp_dir``) with the live model and
    writes it as t2t-decoder does (``decoding/runner.py``: ``decode_<split>.txt`` in
    output_dir, or T2T's names under ``--decode_to_file``); ``--decode_reference`` adds T2T's
    BLEU line. One decoder for the run, so each input length is traced once."""

    def __init__(self, model, problem, cfg: TrainerConfig) -> None:
        from t2t_repro.decoding import runner, split_decoding
        from t2t_repro.decoding.line_decoder import decode_hparams

        self.problem, self.cfg = problem, cfg
        overrides, self.max_examples = split_decoding.split_example_cap(cfg.decode_hparams)
        dhp = decode_hparams(overrides, getattr(problem, "decode_defaults", None))
        self.decoder = runner.decoder_for_model(
            model, problem, cfg.data_dir, dhp, random_seed=cfg.random_seed
        )
        names = (cfg.model, cfg.hparams_set, cfg.problem)
        self.paths = split_decoding.split_paths(
            cfg.output_dir, "dev", cfg.decode_to_file, names, dhp
        )

    def __call__(self, step: int) -> str:
        """Writes the decodes; returns what to log."""
        from t2t_repro.decoding import decode_hooks, split_decoding

        paths = split_decoding.decode_split(
            self.decoder, self.problem, self.cfg.tmp_dir, "dev", self.paths, self.max_examples
        )
        if paths is None:
            nothing = split_decoding.nothing_written(self.decoder.dhp)
            return f"dev decodes at step {step}: {nothing}"
        text = f"decoded dev at step {step}: {paths.decodes} (references: {paths.targets})"
        if self.cfg.decode_reference:
            # T2T's decode schedule names no split; train_eval_and_decode's is "eval"
            split = "eval" if self.cfg.schedule == "train_eval_and_decode" else None
            cfg = self.cfg
            text += "\n" + decode_hooks.log_reference_bleu(
                paths.decodes, cfg.decode_reference, cfg.output_dir, self.decoder.dhp, split
            )
        return text
