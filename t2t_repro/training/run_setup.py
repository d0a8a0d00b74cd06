"""What a training run settles before its loop starts: the checks that read no file
(``check_config``), precision and seed, and the SIGINT/SIGTERM flag the loop polls."""

from __future__ import annotations

import dataclasses
import signal

import keras
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.data import t2t_shards, target_chunks
from t2t_repro.decoding.split_decoding import check_split_decodable
from t2t_repro.errors import UserError
from t2t_repro.hparam import override_text
from t2t_repro.hparams_lib.build import check_hparams
from t2t_repro.paths import expect_directory
from t2t_repro.training.config import (
    MIXED_PRECISION,
    READ_ONLY_SCHEDULES,
    REFUSED_SCHEDULES,
    SCHEDULES,
    TrainerConfig,
)
from t2t_repro.training.loop import autoregressive_eval
from t2t_repro.training.loop.scheduled_sampling import sampling_for
from t2t_repro.training.loop.schedules import READS_EVAL_EVENTS
from t2t_repro.training.precision_hint import print_bf16_hint

# The schedules whose evaluations happen during training, in one loop (where early stopping
# decides): every --local_eval_frequency steps, or after a checkpoint (continuous_*).
EARLY_STOPPING_SCHEDULES = (
    "train_and_evaluate",
    "train_eval_and_decode",
    "continuous_train_and_eval",
)


class TrainingError(UserError, RuntimeError):
    """Training cannot continue (non-finite loss, bad configuration)."""


def built_model(name: str, hp, schedule: str = "train") -> keras.Model:
    """The registered model ``name`` of ``hp``, built; a model that refuses the problem's
    hparams (e.g. a class-label target for ``transformer``, or T2T's scheduled sampling for
    a class label) says why in one line. ``schedule``: the run's (one that trains or not)."""
    try:
        model = registry.model(name)(hp)
        sampling_for(model, hp, training=schedule not in READ_ONLY_SCHEDULES)
    except ValueError as e:
        raise TrainingError(f"--model={name}: {e}") from e
    model.build()
    return model


def check_config(cfg: TrainerConfig) -> None:
    """The checks that read no file (names, overrides, schedule, flag values), so that a typo
    or an unusable value is reported in one line before anything is read or written."""
    if cfg.schedule in REFUSED_SCHEDULES:
        raise TrainingError(f"--schedule={cfg.schedule}: {REFUSED_SCHEDULES[cfg.schedule]}.")
    if cfg.schedule not in SCHEDULES:
        raise TrainingError(f"--schedule={cfg.schedule}: choose one of {', '.join(SCHEDULES)}.")
    problem = registry.problem(cfg.problem)
    registry.model(cfg.model)
    hp = check_hparams(cfg.hparams_set, cfg.hparams)
    if cfg.schedule in ("decode", "train_eval_and_decode"):  # before --generate_data writes
        check_split_decodable(hp)  # (run_hparams checks a saved hparams.json's too)
    _check_data_hparams(cfg, problem, hp)
    if cfg.decode_hparams:  # parsed at start on every schedule, as T2T's trainer parses them
        _check_decode_hparams(cfg.decode_hparams, problem)
    # Flag values the loop can run with.
    at_least = {
        "train_steps": 1,
        "keep_checkpoint_max": 0,  # T2T's 0 keeps every checkpoint (Saver's max_to_keep)
        "log_step_count_steps": 1,
        "steps_per_loop": 1,
        "local_eval_frequency": 0,
        "save_checkpoints_secs": 0,
        "eval_steps": 0,
        "worker_gpu": 0,
        "max_train_seconds": 0,
        "eval_decode_examples": 0,
        "eval_throttle_seconds": 0,
        "inter_op_parallelism_threads": 0,
        "intra_op_parallelism_threads": 0,
    }
    for name, low in at_least.items():
        if getattr(cfg, name) < low:
            raise TrainingError(f"--{name}={getattr(cfg, name)} must be at least {low}.")
    if cfg.schedule == "train_eval_and_decode" and not cfg.local_eval_frequency:
        raise TrainingError(  # T2T's loop of range(0, train_steps, 0) raises too
            "--schedule=train_eval_and_decode trains in rounds of --local_eval_frequency "
            "steps, each then evaluated and decoded: give it a value above 0."
        )
    if cfg.schedule == "train_and_evaluate" and not cfg.local_eval_frequency:
        raise TrainingError(  # trainer_lib.py: no ValidationMonitor, and train() not called
            "--schedule=train_and_evaluate with --local_eval_frequency=0 trains nothing in "
            "T2T (its ValidationMonitor needs the frequency): give it a value above 0, or use "
            "--schedule=train."
        )
    if not cfg.keep_checkpoint_every_n_hours > 0:  # as T2T's RunConfig refuses it
        raise TrainingError(
            f"--keep_checkpoint_every_n_hours={cfg.keep_checkpoint_every_n_hours} must be above 0 "
            "(T2T's default 10000: in effect, keep only --keep_checkpoint_max)."
        )
    if cfg.mixed_precision not in MIXED_PRECISION:
        raise TrainingError(
            f"--mixed_precision must be bfloat16 or float16; got {cfg.mixed_precision!r}."
        )
    if cfg.worker_gpu > 1:  # 1 (T2T's default) on a host without a GPU: its CPU
        visible = len(tf.config.list_physical_devices("GPU"))
        if cfg.worker_gpu > visible:
            raise TrainingError(
                f"--worker_gpu={cfg.worker_gpu} but only {visible} GPU(s) are visible."
            )
    _check_warm_start_and_early_stopping(cfg)
    expect_directory(cfg.output_dir, "--output_dir")


def _check_data_hparams(cfg: TrainerConfig, problem, hp) -> None:
    """T2T's target chunks and autoregressive evaluation refused where they cannot run, before
    --generate_data writes (the trainer checks a saved hparams.json's again when it reads
    the data and builds its evaluation)."""
    packed = bool(problem.packed_length or hp.get("pack_dataset", False))
    target_chunks.check(hp, cfg.schedule not in READ_ONLY_SCHEDULES, packed)
    why = autoregressive_eval.refusal(hp, packed) if cfg.schedule != "train" else ""
    if why:
        raise TrainingError(why + ".")


def _check_decode_hparams(overrides: str, problem) -> None:
    """A typo in --decode_hparams refused before training (T2T's bin/t2t_trainer.py, main:
    ``decoding.decode_hparams``), not at the first dev decodes."""
    from t2t_repro.decoding import split_decoding
    from t2t_repro.decoding.line_decoder import decode_hparams

    parsed, _ = split_decoding.split_example_cap(overrides)
    decode_hparams(parsed, getattr(problem, "decode_defaults", None))
    shards = override_text(overrides, "shards") or ""
    if shards.lstrip("-").isdigit() and int(shards) > 1:  # decoding.py, decode_from_dataset
        raise TrainingError(
            f"--decode_hparams shards={shards}: T2T's trainer then decodes only data shard "
            "shard_id of the dev split, which this trainer does not implement: drop it (or "
            "decode a share of a file with t2t-decoder --decode_shards --worker_id)."
        )


def _check_warm_start_and_early_stopping(cfg: TrainerConfig) -> None:
    """Refuses the values these flags cannot act on (rather than ignore them)."""
    evaluating = cfg.schedule in ("evaluate", "continuous_eval")
    if cfg.warm_start_from and evaluating:
        raise TrainingError(
            f"--warm_start_from starts a training run; --schedule={cfg.schedule} trains "
            "nothing (evaluate the source directly: --output_dir=<it>)."
        )
    if cfg.eval_early_stopping_steps is None:
        return
    if cfg.eval_early_stopping_steps < 1:
        raise TrainingError(
            f"--eval_early_stopping_steps={cfg.eval_early_stopping_steps} must be at least 1."
        )
    if cfg.eval_early_stopping_metric_delta < 0:
        raise TrainingError(
            f"--eval_early_stopping_metric_delta={cfg.eval_early_stopping_metric_delta} must "
            "be at least 0."
        )
    if cfg.schedule in READ_ONLY_SCHEDULES:
        raise TrainingError(
            f"--eval_early_stopping_steps stops a training job; --schedule={cfg.schedule} "
            "trains nothing: give the flag to the --schedule=train job, which reads this "
            "job's eval events (drop it here)."
        )
    checkpoints = cfg.local_eval_frequency or cfg.save_checkpoints_secs
    if not (
        cfg.local_eval_frequency or (cfg.schedule == "continuous_train_and_eval" and checkpoints)
    ):
        schedules = EARLY_STOPPING_SCHEDULES + READS_EVAL_EVENTS
        raise TrainingError(
            "--eval_early_stopping_steps decides at evaluations during training, or every "
            "--local_eval_frequency steps from the eval events of a continuous_eval job: use "
            f"--schedule={' or '.join(schedules)} with --local_eval_frequency > 0 (now "
            f"--schedule={cfg.schedule}, --local_eval_frequency={cfg.local_eval_frequency})."
        )


class StopFlag:
    """Set by SIGINT/SIGTERM; the loop checks it between step loops."""

    def __init__(self) -> None:
        self.signal = None
        self._previous = {}

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum, frame) -> None:
        self.signal = signal.Signals(signum).name

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def setup_seed(cfg: TrainerConfig) -> None:
    """--random_seed, before anything draws (T2T's trainer seeds before --generate_data; a
    T2T problem's datagen continuing from it records it, ``data/t2t_shards.py``)."""
    t2t_shards.note_tool_seed(cfg.random_seed)
    if cfg.random_seed is not None:
        keras.utils.set_random_seed(cfg.random_seed)
        tf.config.experimental.enable_op_determinism()


def datagen_flags(cfg: TrainerConfig) -> dict:
    """What --generate_data passes the problem's ``generate_data``: the trainer's
    --random_seed when given, as T2T's trainer seeds with it before it calls generate_data
    (bin/t2t_trainer.py, main), which draws from it; else the problem's own default."""
    return {} if cfg.random_seed is None else {"random_seed": cfg.random_seed}


def setup_precision(
    cfg: TrainerConfig, hp, gpu_automatic_mixed_precision: bool = False
) -> TrainerConfig:
    """The run's precision (returned as ``cfg.mixed_precision``): the flag, or T2T's hparam
    ``activation_dtype`` bfloat16 or float16 (``utils/t2t_model.py``, ``_custom_getter``:
    activations in that type over float32 variables, which is Keras's mixed policy; float16's
    loss scaling is T2T's, ``optimizers/loss_scale.py``). ``gpu_automatic_mixed_precision``:
    T2T's trainer flag, which sets the hparam (``bin/t2t_trainer.py``)."""
    activation = hp.get("activation_dtype", "float32")
    # T2T's optimize.py (optimize) refuses its graph rewrite with float16 activations
    auto = gpu_automatic_mixed_precision or hp.gpu_automatic_mixed_precision
    if activation == "float16" and auto:
        raise TrainingError(
            "GPU auto mixed precision cannot be used with manual mixed precision (T2T's "
            "RuntimeError): --gpu_automatic_mixed_precision (or its hparam) and "
            "activation_dtype=float16 ask for both; drop one."
        )
    if activation != "float32":
        if cfg.mixed_precision not in ("", activation):
            raise TrainingError(
                f"--mixed_precision={cfg.mixed_precision} and the hparam activation_dtype="
                f"{activation} ask for two precisions: drop one."
            )
        cfg = dataclasses.replace(cfg, mixed_precision=activation)
    # T2T's optimize.py (optimize) reads the hparam itself; its --gpu_automatic_mixed_precision
    # flag only sets it (t2t_trainer.py): float16 here, as that flag (commands/trainer.py)
    if hp.gpu_automatic_mixed_precision:
        if cfg.mixed_precision not in ("", "float16"):
            raise TrainingError(
                "the hparam gpu_automatic_mixed_precision=True is float16; it contradicts "
                f"the run's {cfg.mixed_precision} (--mixed_precision or activation_dtype)."
            )
        cfg = dataclasses.replace(cfg, mixed_precision="float16")
    if cfg.mixed_precision:
        keras.mixed_precision.set_global_policy(f"mixed_{cfg.mixed_precision}")
    print_bf16_hint(cfg.mixed_precision)
    return cfg


def setup_runtime(inter_op: int, intra_op: int, log_device_placement: bool = False) -> None:
    """T2T's session config (``tensor2tensor/utils/trainer_lib.py``,
    ``create_session_config``): ``--inter_op_parallelism_threads`` and
    ``--intra_op_parallelism_threads`` (0: TensorFlow's choice), ``--log_device_placement``.
    The thread pools can only be sized before TensorFlow runs its first op."""
    threading = tf.config.threading
    for name, value, get, set_ in (
        (
            "inter",
            inter_op,
            threading.get_inter_op_parallelism_threads,
            threading.set_inter_op_parallelism_threads,
        ),
        (
            "intra",
            intra_op,
            threading.get_intra_op_parallelism_threads,
            threading.set_intra_op_parallelism_threads,
        ),
    ):
        if value and get() != value:
            try:
                set_(value)
            except RuntimeError:
                raise UserError(
                    f"--{name}_op_parallelism_threads={value}: TensorFlow already started in "
                    "this process; pass it on the command line of a new process."
                ) from None
    if log_device_placement:
        tf.debugging.set_log_device_placement(True)
