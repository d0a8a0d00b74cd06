"""TensorBoard event files and the console line of a training run.

Training scalars go to ``output_dir``, eval scalars to ``output_dir/eval`` (as T2T). The
hparams are written once as a text summary (a markdown table).
"""

from __future__ import annotations

import os
import sys
import time

import tensorflow as tf


class Summaries:
    def __init__(self, output_dir: str, write: bool = True) -> None:
        """``write`` False (a cluster's non-chief workers): writers that write nothing."""
        self._output_dir, self._write, self._eval_eval = output_dir, write, None
        if not write:
            self.train = self.eval = tf.summary.create_noop_writer()
            return
        self.train = tf.summary.create_file_writer(output_dir)
        self.eval = tf.summary.create_file_writer(os.path.join(output_dir, "eval"))

    @property
    def eval_eval(self):
        """``<output_dir>/eval_eval``, where T2T's ``Estimator.evaluate(name="eval")`` writes
        (``schedules.eval_writers``); made when first written to."""
        if self._eval_eval is None:
            self._eval_eval = (
                tf.summary.create_file_writer(os.path.join(self._output_dir, "eval_eval"))
                if self._write
                else tf.summary.create_noop_writer()
            )
        return self._eval_eval

    def hparams_text(self, hparams, step: int) -> None:
        rows = "\n".join(f"| {k} | {v} |" for k, v in sorted(hparams.values().items()))
        with self.train.as_default():
            tf.summary.text("hparams", f"| hparam | value |\n|---|---|\n{rows}", step=step)
        self.train.flush()

    def scalars(self, writer_name: str, values: dict, step: int) -> None:
        writer = getattr(self, writer_name)
        with writer.as_default():
            for name, value in values.items():
                tf.summary.scalar(name, value, step=step)
        writer.flush()

    def images(self, writer_name: str, images: dict, step: int) -> None:
        writer = getattr(self, writer_name)
        with writer.as_default():
            for name, image in images.items():
                tf.summary.image(name, image, step=step, max_outputs=1)
        writer.flush()


def window_scalars(window: dict, learning_rate: float, hparams, steps_per_update: int = 1) -> dict:
    """The training scalars of one log window (sums over its loop calls, ``seconds`` of
    wall time): what TensorBoard shows under ``train/``. ``global_step/sec`` is T2T's
    Estimator's (``StepCounterHook``: global steps, ``steps_per_update`` per update, a second),
    of the window's loop calls that did not trace; a window that only traced has none, as
    T2T's hook writes nothing at its first trigger."""
    seconds = max(window["seconds"], 1e-9)
    values = {
        "loss": window["loss_sum"] / window["updates"],
        "learning_rate": learning_rate,
        "grad_norm": window["grad_norm_sum"] / window["updates"],
        "tokens_per_sec": window["target_tokens"] / seconds,
        "examples_per_sec": window["examples"] / seconds,
        "input_stats/targets_nonpadding_fraction": window["target_tokens"]
        / max(window["target_padded"], 1),
        "effective_tokens_per_update": window["target_tokens"] / window["updates"],
    }
    if window.get("timed_seconds"):
        timed = window["timed_updates"] * steps_per_update
        values["global_step/sec"] = timed / window["timed_seconds"]
    mfu = _mfu(hparams, window, seconds)
    if mfu is not None:
        values["mfu"] = mfu
    return values


def _mfu(hparams, window: dict, seconds: float) -> float | None:
    """Model-FLOPs utilisation against ``T2T_PEAK_FLOPS`` (FLOP/s), when that is set.

    Uses the window's mean padded target length for both sides (batches are bucketed by
    max(source, target) length, so this is close).
    """
    peak = float(os.environ.get("T2T_PEAK_FLOPS", "0") or 0)
    if not peak or not window["examples"]:
        return None
    from t2t_repro.models.flops import training_flops

    length = window["target_padded"] / window["examples"]
    flops = training_flops(hparams, 1, length, length) * window["examples"]
    return flops / seconds / peak


def format_duration(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


class ConsoleLog:
    """``step 200/1000 | loss 3.21 | lr 4.1e-04 | 5,120 tok/s | ETA 4m10s``."""

    def __init__(self, total_steps: int, stream=None, deadline: float = 0.0) -> None:
        self.total_steps = total_steps
        self.stream = stream  # None: sys.stdout as it is when a line is printed (not at import)
        self.start = time.time()
        self.deadline = deadline  # time.time() when --max_train_seconds stops the run; 0: none

    def eta_seconds(self, step: int, steps_per_sec: float) -> float:
        eta = (self.total_steps - step) / max(steps_per_sec, 1e-9)
        return min(eta, max(0.0, self.deadline - time.time())) if self.deadline else eta

    def line(
        self, step: int, loss: float, lr: float, tokens_per_sec: float, steps_per_sec: float | None
    ) -> None:
        """``steps_per_sec`` None: no timing yet that excludes tracing, so no ETA."""
        eta = (
            "-" if steps_per_sec is None else format_duration(self.eta_seconds(step, steps_per_sec))
        )
        print(
            f"step {step}/{self.total_steps} | loss {loss:.4f} | lr {lr:.3e} | "
            f"{tokens_per_sec:,.0f} tok/s | ETA {eta}",
            file=self.stream or sys.stdout,
            flush=True,
        )
