#!/usr/bin/env python3
"""The trainer's real throughput on bucketed batches against the bare train step on the same.

One configuration per process (precision policy and XLA caches are process-wide):

    .venv/bin/python -m bench.bench_trainer_real_batches --data_dir=DATA [--xla] \
        [--mixed_precision=bfloat16] [--hparams=padded_bucket_step=1.25] --out FILE

Runs the real ``Trainer`` (``schedule=train``, no eval, no checkpoint until the end) on the
problem's training shards, and, between its log windows (every ``--window`` updates), the
bare step (forward, loss, backward, Adam; one ``tf.function`` taking the batch, no input
pipeline, no metrics) on the same batches, read from the same seeded pipeline beforehand.
The two alternate window by window, so they are compared in the same minutes. The trainer's
time of a window is the wall time from the end of the previous bare block to the end of its
own log call: its loop calls, input pipeline, metrics reads, summaries and host work.

Throughput counts real (non-pad) target tokens after ``--warmup`` updates. With ``--xla`` a
new batch shape compiles (in both). XLA's own count and time of compilations come from
TensorFlow's log (``TF_CPP_VMODULE=device_compiler=1``; stderr goes to a log file whose
offsets tell which side compiled); the JSON also gives the number of distinct batch shapes.
"""

import argparse
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time

# Before TensorFlow loads: its C++ log (XLA's compilation lines) goes to a file we parse.
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
os.environ["TF_CPP_VMODULE"] = "device_compiler=1"
TF_LOG = tempfile.NamedTemporaryFile(prefix="tf_log_", suffix=".txt", delete=False).name
sys.stderr = os.fdopen(os.dup(2), "w", buffering=1)  # Python's messages stay on the console.
os.dup2(os.open(TF_LOG, os.O_WRONLY | os.O_APPEND), 2)

import tensorflow as tf  # noqa: E402

from bench.report import cpu_model, emit  # noqa: E402
from t2t_repro import registry  # noqa: E402
from t2t_repro.commands.builtins import register_builtins  # noqa: E402
from t2t_repro.data.input_pipeline import TRAIN, make_dataset  # noqa: E402
from t2t_repro.hparam import join_overrides  # noqa: E402
from t2t_repro.optimizers import make_optimizer  # noqa: E402
from t2t_repro.training.config import TrainerConfig  # noqa: E402
from t2t_repro.training.loop.train_step import batch_loss_sums  # noqa: E402
from t2t_repro.training.trainer import Trainer  # noqa: E402

SMALL = "hidden_size=256,filter_size=1024,num_heads=4,num_hidden_layers=2,batch_size=1024"


COMPILED = re.compile(rb"Compilation of XLA executable time: .*?\((\d+) us\)")


def log_offset() -> int:
    return os.path.getsize(TF_LOG)


def xla_compilations(segments: list[tuple[int, int, str]]) -> dict:
    """{side: {"count", "seconds"}} of the XLA compilations logged in each side's segments."""
    found = {side: {"count": 0, "seconds": 0.0} for _, _, side in segments}
    with open(TF_LOG, "rb") as f:
        text = f.read()
    for match in COMPILED.finditer(text):
        side = next((s for a, b, s in segments if a <= match.start() < b), "elsewhere")
        entry = found.setdefault(side, {"count": 0, "seconds": 0.0})
        entry["count"] += 1
        entry["seconds"] += int(match.group(1)) / 1e6
    return found


def shape_of(batch: dict) -> tuple:
    return tuple(tuple(batch[k].shape) for k in ("inputs", "targets"))


def real_tokens(batch: dict) -> int:
    return int(tf.reduce_sum(tf.cast(batch["targets"] > 0, tf.int32)))


class BareStep:
    """Forward + backward + Adam on a model of its own, timed one batch at a time."""

    def __init__(self, model_name: str, hparams, xla: bool, with_norm: bool = False) -> None:
        self.model = registry.model(model_name)(hparams)
        self.model.build()
        self.optimizer = make_optimizer(hparams)
        self.optimizer.build(self.model.trainable_variables)
        spec = {k: tf.TensorSpec([None, None], tf.int32) for k in ("inputs", "targets")}
        smoothing = hparams.label_smoothing

        @tf.function(input_signature=[spec], jit_compile=xla)
        @tf.autograph.experimental.do_not_convert  # straight-line code
        def step(features):
            variables = self.model.trainable_variables
            with tf.GradientTape() as tape:
                loss, tokens = batch_loss_sums(self.model, features, smoothing)
                loss = loss / tf.maximum(tokens, 1.0)
            grads = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(grads, variables, strict=True))
            # --bare_with_norm: plus the trainer's gradient-norm metric, to see what it costs.
            return tf.linalg.global_norm(grads) + loss if with_norm else loss

        self.step = step
        self.times: list[tuple[tuple, float]] = []
        self.segments: list[tuple[int, int, str]] = []

    def run(self, batches: list[dict]) -> float:
        offset, start = log_offset(), time.perf_counter()
        for batch in batches:
            t = time.perf_counter()
            self.step(batch).numpy()
            self.times.append((shape_of(batch), time.perf_counter() - t))
        self.segments.append((offset, log_offset(), "bare"))
        return time.perf_counter() - start


class TimedTrainer(Trainer):
    """The real trainer; after each log window it runs the bare step on the same batches."""

    def __init__(self, cfg, batches, bare: BareStep) -> None:
        super().__init__(cfg)
        self.batches, self.bare, self.windows = batches, bare, []

    def train(self) -> dict:
        self._mark, self._offset = time.perf_counter(), log_offset()
        return super().train()

    def _log_window(self, w, console) -> None:
        super()._log_window(w, console)
        trainer_s = time.perf_counter() - self._mark
        self.bare.segments.append((self._offset, log_offset(), "trainer"))
        first, last = self.step - int(w["updates"]), self.step
        window = self.batches[first:last]
        self.windows.append(
            {
                "first_update": first,
                "updates": last - first,
                "trainer_s": trainer_s,
                "trainer_real_target_tokens": w["target_tokens"],
                "bare_real_target_tokens": sum(real_tokens(b) for b in window),
                "new_shapes": len({shape_of(b) for b in window} - self._seen_shapes(first)),
                "bare_s": self.bare.run(window),
            }
        )
        self._mark, self._offset = time.perf_counter(), log_offset()

    def _seen_shapes(self, before: int) -> set:
        return {shape_of(b) for b in self.batches[:before]}


def compile_stats(times: list[tuple[tuple, float]]) -> dict:
    by_shape: dict[tuple, list[float]] = {}
    for shape, seconds in times:
        by_shape.setdefault(shape, []).append(seconds)
    extra = [s[0] - statistics.median(s[1:]) for s in by_shape.values() if len(s) > 1]
    return {
        "distinct_shapes": len(by_shape),
        "first_step_extra_s_total": sum(extra),
        "first_step_extra_s_median": statistics.median(extra) if extra else None,
        "shapes_seen_once": sum(1 for s in by_shape.values() if len(s) == 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="translate_ende_multi30k")
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--hparams_set", default="transformer_base_v1")
    parser.add_argument(
        "--hparams",
        default="",
        help=f"over the small model's (a name here replaces its value): {SMALL}",
    )
    parser.add_argument("--xla", action="store_true")
    parser.add_argument("--mixed_precision", default="", choices=["", "bfloat16"])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument(
        "--bare_with_norm", action="store_true", help="the bare step also takes the grad norm"
    )
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    overrides = join_overrides(SMALL, args.hparams)
    total = args.warmup + args.steps
    load_start = open("/proc/loadavg").read().strip()
    with tempfile.TemporaryDirectory() as output_dir:
        cfg = TrainerConfig(
            problem=args.problem,
            hparams_set=args.hparams_set,
            hparams=overrides,
            data_dir=args.data_dir,
            output_dir=output_dir,
            train_steps=total,
            schedule="train",
            local_eval_frequency=10**9,
            log_step_count_steps=args.window,
            steps_per_loop=args.window,
            random_seed=1,
            mixed_precision=args.mixed_precision,
            xla=args.xla,
            attention_images=False,
            eval_decode_examples=0,
        )
        problem = registry.problem(args.problem)
        with contextlib.redirect_stdout(sys.stderr):
            trainer = TimedTrainer(cfg, batches=[], bare=None)
            # The trainer's own batches: the same seeded pipeline, read ahead of time.
            dataset = make_dataset(
                problem.filepattern(args.data_dir, "train"),
                TRAIN,
                trainer.hparams,
                length_multiplier=problem.batch_size_multiplier,
                seed=cfg.random_seed,
            )
            iterator = iter(dataset.take(total))
            trainer.batches = [next(iterator) for _ in range(args.warmup)]  # fills buffers
            pipeline_start = time.perf_counter()
            trainer.batches += list(iterator)
            pipeline_s = time.perf_counter() - pipeline_start
            trainer.bare = BareStep(cfg.model, trainer.hparams, args.xla, args.bare_with_norm)
            start = time.perf_counter()
            trainer.run()
            wall_s = time.perf_counter() - start
    timed = [w for w in trainer.windows if w["first_update"] >= args.warmup]
    tokens = sum(w["trainer_real_target_tokens"] for w in timed)
    trainer_s = sum(w["trainer_s"] for w in timed)
    bare_s = sum(w["bare_s"] for w in timed)
    ratios = [w["trainer_s"] / w["bare_s"] for w in timed]
    report = {
        "cpu": "1 core of " + cpu_model(),
        "problem": args.problem,
        "hparams_set": args.hparams_set,
        "hparams": overrides,
        "xla": args.xla,
        "mixed_precision": args.mixed_precision or "float32",
        "warmup_updates": args.warmup,
        "timed_updates": sum(w["updates"] for w in timed),
        "window_updates": args.window,
        "same_batches": all(
            w["trainer_real_target_tokens"] == w["bare_real_target_tokens"] for w in trainer.windows
        ),
        "trainer_target_tokens_per_s": tokens / trainer_s,
        "bare_target_tokens_per_s": tokens / bare_s,
        "trainer_over_bare_time_pct": 100 * (trainer_s / bare_s - 1),
        "median_window_ratio": statistics.median(ratios),
        "real_target_tokens_per_update": tokens / max(1, sum(w["updates"] for w in timed)),
        "target_nonpadding_fraction": _nonpadding(trainer.batches),
        "bare_with_norm": args.bare_with_norm,
        # Reading the batches after warm-up up front, on the same core: the input pipeline's
        # cost per batch (prefetching threads included).
        "input_pipeline_s_per_batch": pipeline_s / max(1, args.steps),
        "distinct_batch_shapes": len({shape_of(b) for b in trainer.batches}),
        "xla_compilations": xla_compilations(trainer.bare.segments),
        "bare_first_step_of_a_shape": compile_stats(trainer.bare.times),
        "new_shapes_in_timed_windows": sum(w["new_shapes"] for w in timed),
        "process_wall_s": wall_s,
        "windows": trainer.windows,
        "load_average_start": load_start,
        "load_average_end": open("/proc/loadavg").read().strip(),
    }
    os.unlink(TF_LOG)
    emit(report, args.out)
    return 0


def _nonpadding(batches: list[dict]) -> float:
    real = sum(real_tokens(b) for b in batches)
    return real / max(1, sum(int(tf.size(b["targets"])) for b in batches))


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
