"""What a training run is asked to do. ``TrainerConfig``'s defaults are also t2t-trainer's flag
defaults (``t2t_repro/commands/trainer.py`` reads them from here), so they live in one place.

Kept free of TensorFlow so that building the tool's parser (``--help``) stays instant.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SCHEDULES = ("train", "train_and_evaluate", "evaluate", "continuous_eval")
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
    schedule: str = "train_and_evaluate"
    local_eval_frequency: int = 1000
    save_checkpoints_secs: int = 0
    keep_checkpoint_max: int = 20
    worker_gpu: int = 0
    random_seed: int | None = None
    mixed_precision: str = ""
    xla: bool = False
    log_step_count_steps: int = 100
    steps_per_loop: int = 20
    max_train_seconds: float = 0  # Stop (and save) after this much training time; 0: no limit.
    # Several workers: a collective waiting longer than this for a worker ends the run (0: never).
    collective_timeout_secs: float = 600
    # The exit code after a stop signal (SIGTERM, SIGINT) and its save: 143, as TF's own
    # preemption handler on GCE; a restart policy reruns the job, which resumes.
    signal_exit_code: int = 143
    attention_images: bool = True  # Heat maps of the first dev example at every evaluation.
    # Dev examples decoded at each eval and scored by the problem's dev metric (0: off).
    eval_decode_examples: int = 64
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
