"""Early stopping with T2T's four flags: stop once the dev metric has plateaued.

T2T's rule (``tensor2tensor/utils/metrics_hook.py``, ``has_metric_plateaued``, which its
``EarlyStoppingHook`` applies to ``--eval_early_stopping_metric`` with
``--eval_early_stopping_steps`` / ``_metric_delta`` / ``_metric_minimize``): take the last
evaluation at least N steps before the newest one; the metric has plateaued when no
evaluation since then has improved on that one's value by ``delta`` or more (decreased, or
increased with ``minimize`` False). The history is every evaluation of the run, read back from
the eval event files on a resume (as T2T's hook reads them), so a resumed run counts the
evaluations before it too.

The metric is any figure the trainer logs at an evaluation: the teacher-forced ``loss``,
``accuracy``, ... or the problem's dev decode metric (``bleu``, ``parse_f1``). T2T's event
tag names (``metrics-<problem>/targets/accuracy``) are accepted for the same figures.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from t2t_repro import fileio
from t2t_repro.errors import UserError

EVAL_METRICS = ("loss", "neg_log_perplexity", "perplexity", "accuracy", "accuracy_per_sequence")
# T2T's names for figures that have another name here: {T2T name: replacement}.
RENAMED = {"approx_bleu_score": "bleu"}
T2T_TAG_PREFIX = "metrics-"  # T2T's eval tags: metrics-<problem>/targets/<metric>


def metric_name(flag_value: str) -> str:
    """The metric's name here: T2T's ``metrics-<problem>/targets/<name>`` tag gives ``name``."""
    if flag_value.startswith(T2T_TAG_PREFIX) and "/" in flag_value:
        return flag_value.rsplit("/", 1)[1]
    return flag_value


def check_metric(flag_value: str, dev_metric_names: tuple[str, ...]) -> str:
    """The metric's name, or a one-line refusal naming the figures this run's evals report."""
    name = metric_name(flag_value)
    if name in EVAL_METRICS or name in dev_metric_names:
        return name
    if name in RENAMED:
        hint = (
            f" T2T's {name} (an approximation from teacher-forced argmax) is not computed "
            f"here; use {RENAMED[name]} (real decodes of dev sentences)."
        )
    else:
        hint = ""
    reported = ", ".join(EVAL_METRICS + dev_metric_names)
    decodes = (
        "" if dev_metric_names else " (the problem's dev metric needs --eval_decode_examples > 0)"
    )
    raise UserError(
        f"--eval_early_stopping_metric={flag_value}: evaluations here report {reported}"
        f"{decodes}.{hint}"
    )


def has_plateaued(
    steps: list[int], values: list[float], num_steps: int, delta: float, minimize: bool
) -> int | None:
    """The step whose value nothing since improved on by ``delta`` or more, when it is at least
    ``num_steps`` before the newest (T2T's ``has_metric_plateaued``); None when not plateaued."""
    if len(steps) < 2:
        return None
    old = [i for i, step in enumerate(steps) if step <= steps[-1] - num_steps]
    if not old:
        return None
    start = old[-1]
    sign = 1.0 if minimize else -1.0
    if all(sign * (values[start] - value) < delta for value in values[start:]):
        return steps[start]
    return None


@dataclasses.dataclass
class EarlyStopping:
    """The run's evaluations of ``metric``; ``update`` says whether to stop."""

    metric: str
    num_steps: int
    delta: float
    minimize: bool
    steps: list[int] = dataclasses.field(default_factory=list)
    values: list[float] = dataclasses.field(default_factory=list)
    since: int | None = None  # the step the metric has not improved on (once plateaued)

    def update(self, step: int, results: dict) -> bool:
        """Records this evaluation (when it has the metric: a cluster's non-chief workers
        have no dev decode metric) and returns whether the metric has plateaued."""
        if self.metric not in results:
            return False
        if self.steps and self.steps[-1] == step:  # the same evaluation again
            return self.since is not None
        self.steps.append(step)
        self.values.append(float(results[self.metric]))
        self.since = has_plateaued(
            self.steps, self.values, self.num_steps, self.delta, self.minimize
        )
        return self.since is not None

    def reason(self) -> str:
        """Why the run stopped: the metric, the value it did not improve on, the best."""
        if self.since is None:
            return f"another worker's {self.metric} has plateaued"
        sign = 1.0 if self.minimize else -1.0  # the best value; its first step on a tie
        best = min(range(len(self.values)), key=lambda i: (sign * self.values[i], self.steps[i]))
        start = self.steps.index(self.since)
        way = "decreased" if self.minimize else "increased"
        return (
            f"dev {self.metric} has not {way} by {self.delta:g} or more in the "
            f"{self.steps[-1] - self.since} steps since step {self.since} ({self.metric} "
            f"{self.values[start]:.4f} there; best {self.values[best]:.4f} at step "
            f"{self.steps[best]}; --eval_early_stopping_steps={self.num_steps})"
        )

    def poll(self, output_dir: str) -> bool:
        """T2T's ``EarlyStoppingHook`` (``tensor2tensor/utils/metrics_hook.py``): reads the
        metric's values from the eval event files another job (``continuous_eval``) writes
        to ``output_dir/eval``, as they are now, and returns whether they have plateaued."""
        self.read_history(output_dir, up_to_step=sys.maxsize)
        self.since = has_plateaued(
            self.steps, self.values, self.num_steps, self.delta, self.minimize
        )
        return self.since is not None

    def read_history(self, output_dir: str, up_to_step: int) -> None:
        """The metric's values in the run's eval event files up to ``up_to_step`` (a resumed
        run's evaluations so far; the last one written for each step)."""
        found = {}
        for step, value in _eval_scalars(os.path.join(output_dir, "eval"), self.metric):
            if step <= up_to_step:
                found[step] = value
        self.steps = sorted(found)
        self.values = [found[s] for s in self.steps]


def make_early_stopping(cfg, problem, hparams) -> EarlyStopping | None:
    """The run's ``EarlyStopping`` (None without --eval_early_stopping_steps); a metric its
    evaluations do not report is refused now, before anything is written."""
    if cfg.eval_early_stopping_steps is None:
        return None
    names: tuple[str, ...] = ()
    if metric_name(cfg.eval_early_stopping_metric) not in EVAL_METRICS and cfg.eval_decode_examples:
        dev = problem.dev_metric(cfg.data_dir, hparams, cfg.eval_decode_examples)
        names = tuple(dev.names) if dev is not None else ()
    return EarlyStopping(
        check_metric(cfg.eval_early_stopping_metric, names),
        cfg.eval_early_stopping_steps,
        cfg.eval_early_stopping_metric_delta,
        cfg.eval_early_stopping_metric_minimize,
    )


def _eval_scalars(eval_dir: str, tag: str):
    """(step, value) of every scalar ``tag`` in the event files of ``eval_dir``."""
    if not fileio.isdir(eval_dir):
        return
    import tensorflow as tf

    for name in sorted(fileio.listdir(eval_dir)):
        if not name.startswith("events.out.tfevents."):
            continue
        try:
            for event in tf.compat.v1.train.summary_iterator(os.path.join(eval_dir, name)):
                for value in event.summary.value:
                    if value.tag == tag:
                        number = (
                            float(tf.make_ndarray(value.tensor))
                            if value.HasField("tensor")
                            else value.simple_value
                        )
                        yield event.step, number
        except tf.errors.DataLossError:  # a file cut short by a killed run: its full records
            continue
