"""t2t-trainer: train (and evaluate) a registered model on a registered problem, as tensor2tensor's.

    t2t-trainer --problem=translate_ende_multi30k --hparams_set=transformer_multi30k_cpu \
        --data_dir=DATA --output_dir=TRAIN --train_steps=20000
    t2t-trainer --problem=wmt_ende --hparams_set=transformer_big --data_dir=DATA --output_dir=TRAIN

Rerunning the same command resumes from the latest checkpoint. SIGINT/SIGTERM save and exit
with --signal_exit_code (143), so that a cluster manager restarts the job.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from t2t_repro.commands import cli
from t2t_repro.training import cluster_flags
from t2t_repro.training.config import (
    FLAG_ALIASES,
    MIXED_PRECISION,
    SCHEDULES,
    config_defaults,
    config_from_flags,
)


def build_parser() -> argparse.ArgumentParser:
    """T2T's flags; every default comes from ``TrainerConfig`` (one place)."""
    d = config_defaults()
    parser = argparse.ArgumentParser(prog="t2t-trainer", description=__doc__.split("\n\n")[0])
    cli.add_problem_flags(parser, "checkpoints, hparams.json, TensorBoard events")
    parser.set_defaults(model=d["model"], tmp_dir=d["tmp_dir"])
    parser.add_argument(
        "--generate_data", action="store_true", default=d["generate_data"], help="run datagen first"
    )
    parser.add_argument("--train_steps", type=int, default=d["train_steps"])
    parser.add_argument(
        "--eval_steps", type=int, default=d["eval_steps"], help="max eval batches (0: all)"
    )
    parser.add_argument(
        "--schedule",
        default=d["schedule"],
        choices=(*SCHEDULES, cluster_flags.PS_SCHEDULE),
        help=f"{cluster_flags.PS_SCHEDULE} (T2T's parameter servers) is refused",
    )
    parser.add_argument(
        "--local_eval_frequency",
        type=int,
        default=d["local_eval_frequency"],
        help="evaluate (and checkpoint) every N steps",
    )
    parser.add_argument(
        "--save_checkpoints_secs",
        type=int,
        default=d["save_checkpoints_secs"],
        help="checkpoint every N seconds instead (the paper: 600)",
    )
    parser.add_argument("--keep_checkpoint_max", type=int, default=d["keep_checkpoint_max"])
    parser.add_argument(
        "--worker_gpu", type=int, default=d["worker_gpu"], help="GPUs to use (0: all visible)"
    )
    parser.add_argument(
        "--random_seed",
        type=int,
        default=d["random_seed"],
        help="seed; also turns on op determinism",
    )
    parser.add_argument("--mixed_precision", default=d["mixed_precision"], choices=MIXED_PRECISION)
    parser.add_argument(
        "--xla", action="store_true", default=d["xla"], help="XLA-compile the train step"
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
        "every worker with an error (0: wait forever; docs/distributed.md)",
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
    cluster_flags.add_cluster_flags(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Trains; the exit code says how it ended (``training/exit_codes.py``)."""
    from t2t_repro.training import exit_codes

    cli.require(args, "problem", "hparams_set", "data_dir", "output_dir")
    cfg = config_from_flags(vars(args))
    cfg = dataclasses.replace(
        cfg,
        data_dir=cli.expand(cfg.data_dir),
        output_dir=cli.expand(cfg.output_dir),
        tmp_dir=cli.expand(cfg.tmp_dir),
    )
    return exit_codes.train(cfg, vars(args))


def main(argv: list[str] | None = None) -> int:
    return cli.run(
        "t2t-trainer",
        run,
        build_parser(),
        argv,
        uses_registry=True,
        check_flags=lambda args: cluster_flags.check_cluster_flags(vars(args)),
    )


if __name__ == "__main__":
    sys.exit(main())
