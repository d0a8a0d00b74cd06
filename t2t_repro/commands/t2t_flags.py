"""tensor2tensor 1.15's flags that a tool does not implement under its own name: each is
accepted (its effect is what happens here anyway, reason given) or refused in one line that
names what to use instead, so a command line copied from T2T never runs with a flag silently
ignored. The flags T2T's tools share with ours (``--problem``, ``--train_steps``,
``--xla_compile``...) are defined, with T2T's meaning, by each tool's own parser; this module adds
only the rest, under one ``--help`` heading, and skips any flag the tool already defines.

T2T's sources: ``bin/t2t_trainer.py`` and ``utils/flags.py`` (the trainer's flags; the
decoder imports both, so it takes them all), ``bin/t2t_decoder.py``, ``bin/t2t_datagen.py``,
``bin/t2t_avg_all.py``, ``bin/t2t_bleu.py``. The tables are the list of T2T's flags; a flag
of T2T's missing from all of them and from the tool's parser is a gap
(tests/test_t2t_flags.py checks the tables against these files' flag names).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, replace
from typing import Any

from t2t_repro.commands import cli
from t2t_repro.errors import UsageError

TPU = "TPUs are not supported; train on GPUs or CPUs (docs/distributed.md)"
CLOUD = "Cloud ML Engine jobs are not launched from here; run t2t-trainer on the machine itself"
TUNING = (
    "Cloud ML Engine hyperparameter tuning is not supported; run one t2t-trainer per "
    "--hparams setting"
)
PROFILE = (
    "T2T's TF1 profiler hooks are not supported; profile a train step with "
    "bench/bench_train_step_profile.py or TensorBoard's profiler"
)
NOT_TRAINING = "is a t2t-trainer flag; t2t-decoder does not train"
ONE_HOST = (
    "t2t-decoder decodes in one process on one device; choose the device with "
    "CUDA_VISIBLE_DEVICES, and share a large input file among processes with "
    "--decode_shards=K --worker_id=I"
)


@dataclass(frozen=True)
class T2TFlag:
    """``refusal``: the one line printed when the flag is given another value than T2T's
    ``default``; empty: accepted at any value, ``accepted`` says why that changes nothing."""

    name: str
    default: Any
    refusal: str = ""
    accepted: str = ""
    kind: type | None = None  # the value's type when ``default`` is None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


def _refused(names: str, default: Any, refusal: str, kind: type | None = None) -> list[T2TFlag]:
    return [T2TFlag(n, default, refusal, kind=kind) for n in names.split()]


# Defined by T2T's problem modules, which t2t-trainer, t2t-decoder, t2t-exporter and
# t2t-datagen import (data_generators/all_problems.py); read only by problems not provided here.
def _problem_module_flag(name: str, default: Any, module: str) -> T2TFlag:
    return T2TFlag(
        name,
        default,
        accepted=f"defined by T2T's data_generators/{module}.py, whose problems are not provided "
        "here (the flag is read by nothing else)",
    )


PROBLEM_MODULES = [
    T2TFlag(
        "parsing_path",
        "",
        accepted="T2T's data_generators/wsj_parsing.py defines it and none of T2T's code reads "
        "it: wsj_parsing reads its trees in --tmp_dir",
    ),
    _problem_module_flag("timit_paths", "", "audio"),
    _problem_module_flag("disable_ffmpeg", False, "video_utils"),
    *(
        _problem_module_flag(f"wiki_revision_{name}", default, "wiki_revision")
        for name, default in (
            ("num_train_shards", 50),
            ("num_dev_shards", 1),
            ("data_prefix", ""),
            ("vocab_file", ""),
            ("max_examples_per_shard", 0),
            ("max_page_size_exp", 26),
            ("max_equal_to_diff_ratio", 0.0),
            ("revision_skip_factor", 1.5),
            ("percent_identical_examples", 0.04),
            ("introduce_errors", True),
        )
    ),
]
# absl's logging flags, which every T2T tool takes (tf.app.run / absl.app.run).
_ABSL_LOGGING = (
    "absl's logging flag: this project's tools print their own lines, none through absl's "
    "logging, so there is nothing for it to redirect (--verbose shows TensorFlow's own)"
)
ABSL = [
    T2TFlag(name, default, accepted=_ABSL_LOGGING, kind=kind)
    for name, default, kind in (
        ("logtostderr", False, None),
        ("alsologtostderr", False, None),
        ("log_dir", "", None),
        ("verbosity", -1, None),
        ("stderrthreshold", "fatal", None),
        ("showprefixforinfo", True, None),
    )
]
WITH_PROBLEMS = ("t2t-trainer", "t2t-decoder", "t2t-exporter", "t2t-datagen", "t2t-query-server")

# bin/t2t_trainer.py and utils/flags.py: what neither t2t-trainer nor t2t-decoder defines.
COMMON = [
    T2TFlag("tpu_num_shards", 8, TPU),
    T2TFlag("tpu_job_name", None, TPU, kind=str),
    T2TFlag("tpu_infeed_sleep_secs", None, TPU, kind=int),
    T2TFlag("cloud_tpu_name", f"{os.getenv('USER')}-tpu", TPU, kind=str),  # T2T's "$USER-tpu"
    *_refused("use_tpu_estimator use_guarantee_const_getter", False, TPU),
    T2TFlag("export_saved_model_api_version", 1, f"{TPU}; t2t-exporter writes a SavedModel"),
    T2TFlag(
        "iterations_per_loop",
        100,
        "is T2T's TPU loop length; here --steps_per_loop sets the updates per tf.function call "
        "and --local_eval_frequency the checkpoint interval (0: T2T's 100)",
    ),
    T2TFlag(
        "xla_jit_level",
        -1,
        "TensorFlow's global JIT is not used; t2t-trainer's --xla compiles the train step and "
        "the decode hparam use_xla=True the search",
    ),
    T2TFlag(
        "optionally_use_dist_strat",
        False,
        accepted="training always runs under tf.distribute (T2T's DistributionStrategy path)",
    ),
    T2TFlag(
        "std_server_protocol",
        "grpc",
        "the cluster is TF_CONFIG's and tf.distribute's (docs/distributed.md)",
    ),
    T2TFlag("cloud_mlengine", False, CLOUD),
    T2TFlag("cloud_mlengine_master_type", None, CLOUD, kind=str),
    T2TFlag(
        "job-dir",
        None,
        accepted="T2T 1.15's Cloud ML Engine name of the train dir: t2t-trainer takes it as "
        "--output_dir, which it overrides (bin/t2t_trainer.py, main); t2t-decoder ignores it, "
        "as T2T's does",
        kind=str,
    ),
    T2TFlag(
        "hparams_range",
        None,
        "tuning with ranged hparams (@registry.register_ranged_hparams) is not supported "
        "here; the ranges register and --registry_help lists them: run one t2t-trainer per "
        "--hparams setting",
        kind=str,
    ),
    T2TFlag("autotune_objective", None, TUNING, kind=str),
    T2TFlag("autotune_maximize", True, TUNING),
    T2TFlag("autotune_max_trials", 10, TUNING),
    T2TFlag("autotune_parallel_trials", 1, TUNING),
    *_refused("profile dbgprofile", False, PROFILE),
    T2TFlag(
        "tfdbg",
        False,
        "TF1's debugger is gone; TF2's is tf.debugging.experimental.enable_dump_debug_info "
        "with TensorBoard's Debugger V2",
    ),
    T2TFlag(
        "export_saved_model",
        False,
        "no export during training; run t2t-exporter on the trained (or averaged) checkpoint",
    ),
    T2TFlag(
        "enable_graph_rewriter",
        False,
        "T2T's TF1 session graph rewriter does not exist in TF2 (Grappler runs by default)",
    ),
    T2TFlag(  # utils/flags.py defines it; T2T's evaluation reads the hparam (t2t_model.py)
        "eval_run_autoregressive",
        False,
        accepted="T2T 1.15.7 defines the flag and reads it nowhere; its evaluation by greedy "
        "decodes is the hparam: --hparams=eval_run_autoregressive=true",
    ),
    T2TFlag(
        "worker_gpu_memory_fraction",
        0.95,
        "TensorFlow 2 takes the GPU's memory itself; TF_FORCE_GPU_ALLOW_GROWTH=true makes it "
        "allocate only what it uses",
    ),
]
# t2t-trainer defines these itself; T2T's t2t-decoder takes them too (refused there below).
_TRAINING_ONLY_OPTIONAL = [
    T2TFlag("warm_start_from", None, kind=str),
    T2TFlag("eval_early_stopping_steps", None, kind=int),
    T2TFlag("eval_early_stopping_metric", "loss"),
    T2TFlag("eval_early_stopping_metric_delta", 0.1),
    T2TFlag("eval_early_stopping_metric_minimize", True),
]
TRAINER = [
    *COMMON,
    T2TFlag(
        "decode_from_file",
        "",
        "t2t-trainer reads it only for --schedule=continuous_decode_from_file; decode a file "
        "with t2t-decoder --decode_from_file",
    ),
]

# T2T's t2t-decoder takes every trainer flag; those about training are refused here.
_TRAINER_ONLY = """generate_data train_steps eval_steps schedule local_eval_frequency
save_checkpoints_secs keep_checkpoint_max keep_checkpoint_every_n_hours log_step_count_steps
eval_throttle_seconds eval_timeout_mins gpu_automatic_mixed_precision""".split()
_TRAINER_DEFAULTS = {
    "generate_data": False,
    "train_steps": 250000,
    "eval_steps": 100,
    "schedule": "continuous_train_and_eval",
    "local_eval_frequency": 1000,
    "save_checkpoints_secs": 0,
    "keep_checkpoint_max": 20,
    "keep_checkpoint_every_n_hours": 10000,
    "log_step_count_steps": 100,
    "eval_throttle_seconds": 600,
    "eval_timeout_mins": 240,
    "gpu_automatic_mixed_precision": False,
}
_CLUSTER_DEFAULTS = {
    "master": "",
    "worker_job": "/job:localhost",
    "worker_gpu": 1,
    "worker_replicas": 1,
    "worker_id": 0,
    "ps_gpu": 0,
    "ps_job": "/job:ps",
    "ps_replicas": 0,
    "gpu_order": "",
    "sync": False,
}
DECODER = [
    *COMMON,
    *(T2TFlag(n, _TRAINER_DEFAULTS[n], f"--{n} {NOT_TRAINING}") for n in _TRAINER_ONLY),
    *(
        T2TFlag(f.name, f.default, f"--{f.name} {NOT_TRAINING}", kind=f.kind)
        for f in _TRAINING_ONLY_OPTIONAL
    ),
    *(T2TFlag(n, d, ONE_HOST) for n, d in _CLUSTER_DEFAULTS.items()),
    T2TFlag("use_tpu", False, TPU),
    T2TFlag(
        "decode_in_memory",
        False,
        accepted="split decodes are always collected in memory and written once",
    ),
]

# serving/export.py takes every trainer flag (it imports bin/t2t_trainer.py) and its own.
_NOT_READ_BY_EXPORT = "T2T's export.py does not read it either"


def xla_compile_note(instead: str) -> str:
    """What t2t-trainer and t2t-decoder say when given --xla_compile."""
    return (
        "note: --xla_compile has no effect, as in T2T 1.15 off TPU (its "
        f"trainer_lib.create_estimator deletes use_xla); {instead}"
    )


def _for_exporter(flag: T2TFlag) -> T2TFlag:
    """A t2t-decoder table entry as t2t-exporter takes it. T2T's export.py takes the trainer's
    flags and reads none of those the decoder refuses but --use_tpu: the training, tuning,
    profiling and cloud ones feed only its RunConfig or nothing, it clears the devices
    (hparams.no_data_parallelism), and the TPU ones act only with --use_tpu. So they are
    accepted at any value, as there."""
    if flag.refusal and flag.name != "use_tpu":
        return replace(flag, refusal="", accepted=_NOT_READ_BY_EXPORT)
    return flag


EXPORTER = [
    *(_for_exporter(f) for f in DECODER if f.name != "decode_in_memory"),
    T2TFlag(
        "export_as_tfhub",
        False,
        "a TF Hub module is not written; t2t-exporter writes a SavedModel (docs/serving.md)",
    ),
    *(
        T2TFlag(n, d, accepted=_NOT_READ_BY_EXPORT, kind=k)
        for n, d, k in (
            ("decode_from_file", "", None),
            ("decode_to_file", "", None),
            ("decode_reference", "", None),
            ("eval_use_test_set", False, None),
            ("tmp_dir", "/tmp/t2t_datagen", None),
            ("xla_compile", False, None),
        )
    ),
    *(
        T2TFlag(
            n, d, accepted="TensorFlow's own settings while exporting; the SavedModel is the same"
        )
        for n, d in (
            ("inter_op_parallelism_threads", 0),
            ("intra_op_parallelism_threads", 0),
            ("log_device_placement", False),
        )
    ),
]

# bin/t2t_datagen.py
DATAGEN = [
    T2TFlag(
        "num_shards",
        0,
        # T2T's generate_data_for_registered_problem raises ValueError("--num_shards should
        # not be set for registered Problem."); it reads the flag only for the legacy
        # generators of its _SUPPORTED_PROBLEM_GENERATORS, none of which exists here.
        "T2T refuses it too for a registered problem ('--num_shards should not be set for "
        "registered Problem.'): the shard counts are the problem's (dataset_splits)",
    ),
    *_refused(
        "env_problem_max_env_steps env_problem_batch_size",
        0,
        "environment (RL) problems are not supported",
    ),
]

# bin/t2t_avg_all.py and bin/t2t_bleu.py: t2t-avg-all defines all of T2T's flags itself, and
# t2t-bleu all but --source.
AVG_ALL: list[T2TFlag] = []
BLEU = [
    T2TFlag(
        "source",
        None,
        accepted="T2T's t2t-bleu reads no source file either (BLEU needs only "
        "translation and reference)",
        kind=str,
    ),
]

TABLES = {
    "t2t-trainer": TRAINER,
    "t2t-decoder": DECODER,
    "t2t-exporter": EXPORTER,
    "t2t-datagen": DATAGEN,
    "t2t-avg-all": AVG_ALL,
    "t2t-bleu": BLEU,
    # bin/t2t_translate_all.py and serving/query.py: their flags are the tools' own
    "t2t-translate-all": [],
    "t2t-query-server": [],
}


def _defined(parser: argparse.ArgumentParser) -> set[str]:
    return {s[2:] for s in parser._option_string_actions if s.startswith("--")}


def flags_added(parser: argparse.ArgumentParser, tool: str) -> list[T2TFlag]:
    """The table's flags that ``parser`` does not define itself, with absl's and, for the
    tools that import T2T's problems, their modules' flags."""
    defined = _defined(parser)
    table = TABLES[tool] + ABSL + (PROBLEM_MODULES if tool in WITH_PROBLEMS else [])
    return [f for f in table if f.name not in defined and f.dest not in defined]


def add_t2t_flags(parser: argparse.ArgumentParser, tool: str) -> None:
    """Adds the table's flags that ``parser`` lacks, listed under one heading of ``--help``."""
    flags = flags_added(parser, tool)
    parser.t2t_flags = tuple(flags)
    absl_help = [f"--{n}" for n in ("helpfull", "helpshort") if n not in _defined(parser)]
    if absl_help:  # absl's help flags: this tool's --help
        parser.add_argument(*absl_help, action="help", help=argparse.SUPPRESS)
    if not flags:
        return
    refused = ", ".join(f"--{f.name}" for f in flags if f.refusal)
    accepted = "; ".join(f"--{f.name} ({f.accepted})" for f in flags if not f.refusal)
    group = parser.add_argument_group(
        "other T2T 1.15 flags",
        f"Refused unless given T2T's default, each with a one-line error saying what to use "
        f"instead: {refused}."
        + (
            f" Accepted, with no effect beyond what happens here anyway: {accepted}."
            if accepted
            else ""
        ),
    )
    for flag in flags:
        kind = flag.kind or type(flag.default)
        if kind is bool:
            cli.add_bool(group, flag.name, argparse.SUPPRESS, default=flag.default, dest=flag.dest)
        else:
            group.add_argument(
                f"--{flag.name}",
                dest=flag.dest,
                type=kind,
                default=flag.default,
                help=argparse.SUPPRESS,
            )


def check_t2t_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """UsageError (one line) for a refused flag given another value than T2T's default."""
    for flag in getattr(parser, "t2t_flags", ()):
        value = getattr(args, flag.dest)
        if flag.refusal and value != flag.default:
            reason = flag.refusal
            if not reason.startswith("--"):
                reason = f"--{flag.name}: {reason}"
            raise UsageError(f"{reason} (given --{flag.name}={value}).")


HP_PREFIX = "--hp_"


def split_hp_args(argv: list[str]) -> tuple[list[str], str]:
    """T2T's t2t-trainer reads ``--hp_NAME VALUE`` pairs as hparams overrides
    (``tensor2tensor/bin/t2t_trainer.py``, ``set_hparams_from_args``): returns the other
    arguments and the pairs as ``NAME=VALUE,...`` (``--hp_NAME=VALUE`` is taken too)."""
    rest, pairs, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith(HP_PREFIX) and "=" in arg:
            pairs.append(arg[len(HP_PREFIX) :])
        elif arg.startswith(HP_PREFIX):
            if i + 1 >= len(argv):
                raise UsageError(f"{arg} needs a value (T2T's form: {arg} VALUE).")
            pairs.append(f"{arg[len(HP_PREFIX) :]}={argv[i + 1]}")
            i += 1
        else:
            rest.append(arg)
        i += 1
    return rest, ",".join(pairs)
