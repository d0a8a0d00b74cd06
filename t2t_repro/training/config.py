"""What a training run is asked to do. ``TrainerConfig``'s defaults are also t2t-trainer's flag
defaults (``t2t_repro/commands/trainer.py`` reads them from here), so they live in one place.

Kept free of TensorFlow so that building the tool's parser (``--help``) stays instant.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# T2T's schedules (``tensor2tensor/utils/trainer_lib.py``, ``T2TExperiment``'s methods) that
# run here. train_and_evaluate evaluates every --local_eval_frequency steps (T2T's
# ValidationMonitor); continuous_train_and_eval (T2T's default, Estimator's
# train_and_evaluate) after a checkpoint once --eval_throttle_seconds passed since the last
# eval; train_eval_and_decode evaluates and decodes the dev split every
# --local_eval_frequency steps; decode decodes the dev split with the newest checkpoint.
SCHEDULES = (
    "train",
    "train_and_evaluate",
    "continuous_train_and_eval",
    "train_eval_and_decode",
    "evaluate",
    "continuous_eval",
    "decode",
)
# Schedules that only read output_dir (no training, nothing of the run's record rewritten).
READ_ONLY_SCHEDULES = ("evaluate", "continuous_eval", "decode")
# T2T's other T2TExperiment methods, refused with what to run instead.
REFUSED_SCHEDULES = {
    "evaluate_on_train_data": "evaluating on the training data is not implemented; "
    "--schedule=evaluate evaluates on dev",
    "continuous_eval_on_train_data": "evaluating on the training data is not implemented; "
    "--schedule=continuous_eval evaluates every new checkpoint on dev",
    "test": "T2T's one-step smoke test: use --schedule=continuous_train_and_eval "
    "--train_steps=1 --eval_steps=1 in a scratch --output_dir (it evaluates at the end)",
    "continuous_decode": "use --schedule=train_eval_and_decode, or t2t-decoder on each checkpoint",
    "continuous_decode_on_train_data": "decoding the training data is not implemented; "
    "t2t-decoder --decode_from_file decodes any file",
    "continuous_decode_on_eval_data": "use --schedule=train_eval_and_decode, or t2t-decoder on "
    "each checkpoint",
    "continuous_decode_from_file": "run t2t-decoder --decode_from_file on each checkpoint",
}
MIXED_PRECISION = ("", "bfloat16", "float16")
# Old flag names still accepted: {old: new}.
FLAG_ALIASES = {"eval_bleu_examples": "eval_decode_examples"}


@dataclasses.dataclass
class TrainerConfig:
    problem: str
    hparams_set: str
    data_dir: str
    output_dir: str
    hparams: str = ""
    model: str = "transformer"
    tmp_dir: str = "/tmp/t2t_datagen"
    generate_data: bool = False
    train_steps: int = 250000
    eval_steps: int = 100
    eval_use_test_set: bool = False  # evaluate on the test split instead of dev (T2T's)
    schedule: str = "continuous_train_and_eval"  # T2T's default (bin/t2t_trainer.py)
    eval_throttle_seconds: int = 600  # continuous_train_and_eval: least seconds between evals
    eval_timeout_mins: int = 240  # continuous_eval: stop after this long without a checkpoint
    # t2t-eval (T2T's bin/t2t_eval.py): continuous_eval as Estimator.evaluate() without a name
    # runs it: into eval/, every checkpoint (step 0's too). Set by that command, not a flag.
    standalone_eval: bool = False
    local_eval_frequency: int = 1000
    save_checkpoints_secs: int = 0
    keep_checkpoint_max: int = 20
    keep_checkpoint_every_n_hours: float = 10000  # also keep one checkpoint per N hours
    # T2T's --worker_gpu (utils/flags.py; utils/devices.py, data_parallelism): the GPUs this
    # worker trains on, the first N visible; 0: the CPU. T2T's default 1 (a host without a
    # GPU trains on its CPU, as T2T's soft placement did).
    worker_gpu: int = 1
    random_seed: int | None = None
    mixed_precision: str = ""
    xla: bool = False
    log_step_count_steps: int = 100
    steps_per_loop: int = 20
    max_train_seconds: float = 0  # Stop (and save) after this much training time; 0: no limit.
    # Several workers: a collective waiting longer than this for a worker ends the run (0: never).
    collective_timeout_secs: float = 600
    # Resume a checkpoint saved by another number of workers (training/cluster/resume_layout.py).
    reshard_on_resume: bool = False
    # The exit code after a stop signal (SIGTERM, SIGINT) and its save: 143, as TF's own
    # preemption handler on GCE; a restart policy reruns the job, which resumes.
    signal_exit_code: int = 143
    attention_images: bool = True  # Heat maps of the first dev example at every evaluation.
    # Dev examples decoded at each eval and scored by the problem's dev metric (0: off).
    eval_decode_examples: int = 64
    # A new run's starting model weights: a checkpoint prefix or a directory of one (T2T's
    # --warm_start_from; ignored when output_dir has checkpoints: the run resumes).
    warm_start_from: str = ""
    # T2T's early stopping (training/loop/early_stopping.py): stop once the dev metric has not
    # improved by delta for this many steps (None: off).
    eval_early_stopping_steps: int | None = None
    eval_early_stopping_metric: str = "loss"
    eval_early_stopping_metric_delta: float = 0.1
    eval_early_stopping_metric_minimize: bool = True
    inter_op_parallelism_threads: int = 0  # TensorFlow's thread pools (0: its choice)
    intra_op_parallelism_threads: int = 0
    log_device_placement: bool = False
    # The decode schedules (decode, train_eval_and_decode): T2T's decode flags.
    decode_hparams: str = ""
    decode_to_file: str = ""
    decode_reference: str = ""
    devices: list | None = None  # explicit replica devices (tests: logical CPUs)


def config_defaults() -> dict[str, Any]:
    """{field: default} of every ``TrainerConfig`` field that has one."""
    return {
        f.name: f.default
        for f in dataclasses.fields(TrainerConfig)
        if f.default is not dataclasses.MISSING
    }


def config_from_flags(flags: dict[str, Any]) -> TrainerConfig:
    """A ``TrainerConfig`` from parsed flags (``vars(args)``); flags it has no field for are
    ignored."""
    names = {f.name for f in dataclasses.fields(TrainerConfig)}
    flags = {FLAG_ALIASES.get(k, k): v for k, v in flags.items()}
    return TrainerConfig(**{k: v for k, v in flags.items() if k in names})
