"""t2t-trainer: train (and evaluate) a registered model on a registered problem, as tensor2tensor's.

    t2t-trainer --problem=translate_ende_multi30k --hparams_set=transformer_multi30k_cpu \
        --data_dir=DATA --output_dir=TRAIN --train_steps=20000
    t2t-trainer --problem=wmt_ende --hparams_set=transformer_big --data_dir=DATA --output_dir=TRAIN

Rerunning the same command resumes from the latest checkpoint (under
--schedule=train_eval_and_decode it then trains --train_steps more, as T2T's). SIGINT/SIGTERM
save and exit with --signal_exit_code (143), so that a cluster manager restarts the job.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from t2t_repro import console
from t2t_repro.commands import absl_argv, cli, t2t_flags
from t2t_repro.errors import UsageError, UserError
from t2t_repro.hparam import override_names, override_text
from t2t_repro.training.cluster import cluster_flags
from t2t_repro.training.config import (
    FLAG_ALIASES,
    MIXED_PRECISION,
    SCHEDULES,
    TrainerConfig,
    config_defaults,
    config_from_flags,
)


def build_parser() -> argparse.ArgumentParser:
    """T2T's flags; every default comes from ``TrainerConfig`` (one place)."""
    d = config_defaults()
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-trainer", description=__doc__.split("\n\n")[0]
    )
    cli.add_problem_flags(parser, "checkpoints, hparams.json, TensorBoard events")
    parser.set_defaults(model=d["model"], tmp_dir=d["tmp_dir"])
    cli.add_bool(parser, "generate_data", "run datagen first", d["generate_data"])
    parser.add_argument("--train_steps", type=int, default=d["train_steps"])
    parser.add_argument(
        "--eval_steps", type=int, default=d["eval_steps"], help="max eval batches (0: all)"
    )
    parser.add_argument(
        "--schedule",
        default=d["schedule"],
        help=f"one of {', '.join(SCHEDULES)} (T2T's; the default, T2T's, is "
        "continuous_train_and_eval: an eval after a checkpoint, at most every "
        "--eval_throttle_seconds, and one at the end); T2T's other "
        "schedules are refused with what to run instead",
    )
    parser.add_argument(
        "--local_eval_frequency",
        type=int,
        default=d["local_eval_frequency"],
        help="checkpoint every N steps; evaluate every N under train_and_evaluate, after "
        "rounds of N under train_eval_and_decode",
    )
    parser.add_argument(
        "--save_checkpoints_secs",
        type=int,
        default=d["save_checkpoints_secs"],
        help="checkpoint every N seconds instead (the paper: 600)",
    )
    parser.add_argument("--keep_checkpoint_max", type=int, default=d["keep_checkpoint_max"])
    parser.add_argument(
        "--keep_checkpoint_every_n_hours",
        type=float,
        default=d["keep_checkpoint_every_n_hours"],
        help="also keep one checkpoint per N hours of training beyond --keep_checkpoint_max",
    )
    parser.add_argument(
        "--worker_gpu",
        type=int,
        default=d["worker_gpu"],
        help="GPUs to train on, the first N visible (T2T's default 1; 0: the CPU)",
    )
    parser.add_argument(
        "--random_seed",
        type=int,
        default=d["random_seed"],
        help="seed; also turns on op determinism",
    )
    parser.add_argument("--mixed_precision", default=d["mixed_precision"], choices=MIXED_PRECISION)
    cli.add_bool(parser, "xla", "XLA-compile the train step", d["xla"])
    cli.add_bool(
        parser,
        "xla_compile",
        "T2T's: no effect, as in T2T 1.15 off TPU (--xla compiles the train step here)",
        False,
    )
    parser.add_argument("--log_step_count_steps", type=int, default=d["log_step_count_steps"])
    parser.add_argument(
        "--steps_per_loop",
        type=int,
        default=d["steps_per_loop"],
        help="steps per tf.function call (host work happens between calls)",
    )
    parser.add_argument(
        "--max_train_seconds",
        type=float,
        default=d["max_train_seconds"],
        help="stop training (after saving) once this much time has passed",
    )
    parser.add_argument(
        "--collective_timeout_secs",
        type=float,
        default=d["collective_timeout_secs"],
        help="several workers: a collective that waits this long for a stuck worker stops "
        "every worker with an error, and a worker whose stage does no work for this long (2x "
        "when it waits for peers) is ended (0: neither; a worker that dies is still noticed, "
        "but one stuck in a read that never returns keeps every worker waiting forever; "
        "docs/distributed.md)",
    )
    parser.add_argument(
        "--reshard_on_resume",
        action=argparse.BooleanOptionalAction,
        default=d["reshard_on_resume"],
        help="resume a checkpoint saved by another number of workers (or one host): same "
        "weights, optimizer, step, learning rate and global batch; the data order continues "
        "from a new seed (docs/distributed.md)",
    )
    parser.add_argument(
        "--signal_exit_code",
        type=int,
        default=d["signal_exit_code"],
        help="exit code after SIGTERM/SIGINT stopped training and saved (a restart policy "
        "reruns the job; docs/distributed.md)",
    )
    parser.add_argument(
        "--attention_images",
        action=argparse.BooleanOptionalAction,
        default=d["attention_images"],
        help="attention heat maps of the first dev example in TensorBoard at every evaluation",
    )
    parser.add_argument(
        "--eval_decode_examples",
        *(f"--{old}" for old, new in FLAG_ALIASES.items() if new == "eval_decode_examples"),
        dest="eval_decode_examples",
        type=int,
        default=d["eval_decode_examples"],
        help="dev examples decoded at every evaluation and scored by the problem's dev metric "
        "(BLEU for text problems, EVALB F1 for parsing); 0: off. Old name: --eval_bleu_examples",
    )
    parser.add_argument(
        "--warm_start_from",
        default=d["warm_start_from"],
        help="start a new run from this checkpoint's model weights (a ckpt-N prefix or a "
        "directory: t2t-trainer's, t2t-avg-all's, t2t-import's), at step 0 with a new optimizer",
    )
    _add_early_stopping_flags(parser, d)
    _add_t2t_run_flags(parser, d)
    cluster_flags.add_cluster_flags(parser)
    t2t_flags.add_t2t_flags(parser, "t2t-trainer")
    return parser


def _add_early_stopping_flags(parser: argparse.ArgumentParser, d: dict) -> None:
    """T2T's four flags (``tensor2tensor/utils/flags.py``), with its defaults."""
    parser.add_argument(
        "--eval_early_stopping_steps",
        type=int,
        default=d["eval_early_stopping_steps"],
        help="stop training once --eval_early_stopping_metric has not improved by "
        "--eval_early_stopping_metric_delta in this many steps (default: never)",
    )
    parser.add_argument(
        "--eval_early_stopping_metric",
        default=d["eval_early_stopping_metric"],
        help="a figure the evals log: loss, accuracy, ..., or the dev decode metric (bleu, "
        "parse_f1)",
    )
    parser.add_argument(
        "--eval_early_stopping_metric_delta",
        type=float,
        default=d["eval_early_stopping_metric_delta"],
        help="the least change that counts as an improvement",
    )
    cli.add_bool(
        parser,
        "eval_early_stopping_metric_minimize",
        "whether the metric improves by going down (loss) or up (False: accuracy, bleu)",
        d["eval_early_stopping_metric_minimize"],
    )


def _add_t2t_run_flags(parser: argparse.ArgumentParser, d: dict) -> None:
    """T2T's flags of evaluation, decoding schedules and the TensorFlow session, honoured."""
    group = parser.add_argument_group("T2T evaluation, decode-schedule and session flags")
    cli.add_bool(
        group,
        "gpu_automatic_mixed_precision",
        "T2T's float16 mixed precision with loss scaling (= --mixed_precision=float16)",
    )
    cli.add_bool(
        group, "eval_use_test_set", "evaluate on the test split, not dev", d["eval_use_test_set"]
    )
    group.add_argument(
        "--eval_throttle_seconds",
        type=int,
        default=d["eval_throttle_seconds"],
        help="continuous_train_and_eval: evaluate after a checkpoint only this long after the "
        "last eval",
    )
    group.add_argument(
        "--eval_timeout_mins",
        type=int,
        default=d["eval_timeout_mins"],
        help="continuous_eval: stop once no new checkpoint came for this long",
    )
    for name in ("decode_hparams", "decode_to_file", "decode_reference"):
        group.add_argument(
            f"--{name}",
            default=d[name],
            help=f"as t2t-decoder's --{name}, for --schedule=decode and train_eval_and_decode",
        )
    for name in ("inter_op_parallelism_threads", "intra_op_parallelism_threads"):
        group.add_argument(
            f"--{name}", type=int, default=d[name], help="TensorFlow's (0: its choice)"
        )
    cli.add_bool(
        group, "log_device_placement", "log the device of every op", d["log_device_placement"]
    )


def check_flags(
    parser: argparse.ArgumentParser, args: argparse.Namespace, hp_args: str = ""
) -> None:
    """Before TensorFlow starts: T2T's flags refused here, and T2T's aliases resolved
    (``hp_args``: T2T's ``--hp_NAME VALUE`` pairs, appended to --hparams as T2T's
    ``set_hparams_from_args`` appends them; a name set both ways is refused, as T2T's
    ``HParams.parse`` refuses a name assigned twice)."""
    t2t_flags.check_t2t_flags(parser, args)
    if args.job_dir:  # T2T's bin/t2t_trainer.py main: --job-dir overrides --output_dir
        args.output_dir = args.job_dir
    given = set(override_names(args.hparams))
    both = [name for name in override_names(hp_args) if name in given]
    if both:
        raise UsageError(
            f"--hp_{both[0]} sets {both[0]}, which --hparams sets too: give it once (T2T's "
            "HParams.parse refuses a name assigned twice)."
        )
    args.hparams = ",".join(filter(None, (args.hparams, hp_args)))
    cluster_flags.check_cluster_flags(vars(args))
    # T2T's create_experiment (utils/trainer_lib.py) fills the decode hparams' decode_to_file
    # and decode_reference from the trainer's flags only when they are empty: given in
    # --decode_hparams they win over the flags (t2t-decoder's flags always win: t2t_decoder.py).
    for name in ("decode_to_file", "decode_reference"):
        given = override_text(args.decode_hparams, name)
        if given:
            setattr(args, name, given)
    if args.gpu_automatic_mixed_precision:
        if args.mixed_precision not in ("", "float16"):
            raise UsageError(
                "--gpu_automatic_mixed_precision is float16; it contradicts "
                f"--mixed_precision={args.mixed_precision}."
            )
        args.mixed_precision = "float16"


def run(args: argparse.Namespace) -> int:
    """Trains; the exit code says how it ended (``training/cluster/exit_codes.py``)."""
    cli.require(args, "problem", "hparams_set", "data_dir", "output_dir")
    if getattr(args, "standalone_eval", False):  # t2t-eval (commands/t2t_eval.py)
        args.schedule = "continuous_eval"
    if args.xla_compile:
        print(t2t_flags.xla_compile_note("--xla compiles the train step here."), file=sys.stderr)
    cfg = config_from_flags(vars(args))
    cfg = dataclasses.replace(
        cfg,
        data_dir=cli.expand(cfg.data_dir),
        output_dir=cli.expand(cfg.output_dir),
        tmp_dir=cli.expand(cfg.tmp_dir),
    )
    return train(cfg, vars(args))


def train(cfg: TrainerConfig, flags: dict) -> int:
    """Runs the trainer; its exit code (``exit_codes.py``'s doc). A peer's failure becomes
    one line. TensorFlow is imported here, not at the top, so that ``--help`` stays instant."""
    from t2t_repro.training.cluster.distribution import cluster
    from t2t_repro.training.cluster.exit_codes import PEER_ERRORS, check_exit_flags, peer_failure
    from t2t_repro.training.trainer import Trainer

    check_exit_flags(cfg)
    trainer = None
    try:
        trainer = Trainer(cfg, flags=flags)
        result = trainer.run()
    except PEER_ERRORS as e:
        here = cluster()
        if here.workers == 1:
            raise
        latest = trainer.ckpt.latest if trainer is not None else None
        raise peer_failure(e, here, cfg.collective_timeout_secs, latest) from None
    signalled = result.get("interrupted") and trainer.signalled  # not the time limit
    return cfg.signal_exit_code if signalled else 0


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """``parser``: t2t-eval's (commands/t2t_eval.py), else t2t-trainer's."""
    parser = parser or build_parser()
    as_program = argv is None  # not a caller's
    try:
        argv = absl_argv.expand_flagfiles(sys.argv[1:] if argv is None else argv)
        argv, hp_args = t2t_flags.split_hp_args(argv)
    except UsageError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 1
    code = cli.run(
        parser.prog,
        run,
        parser,
        argv,
        uses_registry=True,
        check_flags=lambda args: check_flags(parser, args, hp_args),
    )
    if code and as_program and _one_of_several_workers():
        console.silence_teardown()  # its last line said how it ended
    return code


def _one_of_several_workers() -> bool:
    from t2t_repro.training.cluster import tf_config

    try:
        return tf_config.read().workers > 1
    except UserError:  # TF_CONFIG unreadable: the run never formed a cluster
        return False


if __name__ == "__main__":
    sys.exit(main())
