"""Early stopping with T2T's four flags, by the rule T2T 1.15 applies on each ``--schedule``.

T2T's ``create_experiment`` (``tensor2tensor/utils/trainer_lib.py``) picks one of two rules:

- ``train_and_evaluate``: tf.contrib.learn's ``ValidationMonitor`` (``monitors.py``,
  ``every_n_step_end``) with ``early_stopping_rounds=N``: the best value of the job's
  evaluations so far (strictly better only: ``<``, or ``>`` with ``minimize`` False; no
  ``_metric_delta``) and its step; stop once the newest evaluation's step is N or more steps
  after it. The best is kept in memory, so a resumed job starts afresh (``rounds_since_best``).
- every other schedule but ``continuous_train_and_eval``: ``EarlyStoppingHook``
  (``tensor2tensor/utils/metrics_hook.py``), which reads the eval event files and applies
  ``has_metric_plateaued``: take the last evaluation at least N steps before the newest one;
  the metric has plateaued when no evaluation since then has improved on that one's value by
  ``delta`` or more (``has_plateaued``). The hook reads ``<output_dir>/eval_continuous``;
  ``--schedule=train`` reads it first, then the directories T2T 1.15's ``continuous_eval``
  and this project's write (``EVENT_DIRS``).

Beyond T2T (docs/reliability.md): the plateau rule at the evaluations of
``train_eval_and_decode`` and ``continuous_train_and_eval``, with their earlier evaluations
read back from ``<output_dir>/eval`` on a resume.

The metric is any figure the trainer logs at an evaluation: the teacher-forced ``loss``,
``accuracy``, ..., those the problem lists (``accuracy_top5``, ``rouge_L_fscore``...), or the
problem's dev decode metric (``bleu``, ``parse_f1``). T2T's event
tag names (``metrics-<problem>/targets/accuracy``) are accepted for the same figures.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from t2t_repro import fileio
from t2t_repro.errors import UserError

EVAL_METRICS = ("loss", "neg_log_perplexity", "perplexity", "accuracy", "accuracy_per_sequence")
T2T_TAG_PREFIX = "metrics-"  # T2T's eval tags: metrics-<problem>/targets/<metric>
# The schedule on which T2T 1.15 stops with ValidationMonitor's early_stopping_rounds rather
# than EarlyStoppingHook (trainer_lib.py, create_experiment: use_validation_monitor).
VALIDATION_MONITOR_SCHEDULES = ("train_and_evaluate",)
# The directories under output_dir whose eval events --schedule=train reads, the first that
# holds the metric: T2T's EarlyStoppingHook's (create_experiment: early_stopping_kwargs'
# events_dir); the one T2T 1.15's continuous_eval writes (T2TExperiment.evaluate passes
# name="eval" to Estimator.evaluate, whose eval_dir is "eval_" + name); this project's.
EVENT_DIRS = ("eval_continuous", "eval_eval", "eval")


def metric_name(flag_value: str) -> str:
    """The metric's name here: T2T's ``metrics-<problem>/targets/<name>`` tag gives ``name``."""
    if flag_value.startswith(T2T_TAG_PREFIX) and "/" in flag_value:
        return flag_value.rsplit("/", 1)[1]
    return flag_value


def check_metric(
    flag_value: str, dev_metric_names: tuple[str, ...], listed: tuple[str, ...] = ()
) -> str:
    """The metric's name, or a one-line refusal naming the figures this run's evals report.
    ``listed``: the teacher-forced metrics the problem lists (``teacher_forced_metrics``)."""
    name = metric_name(flag_value)
    if name in EVAL_METRICS or name in listed or name in dev_metric_names:
        return name
    reported = ", ".join(EVAL_METRICS + listed + dev_metric_names)
    decodes = (
        "" if dev_metric_names else " (the problem's dev metric needs --eval_decode_examples > 0)"
    )
    raise UserError(
        f"--eval_early_stopping_metric={flag_value}: evaluations here report {reported}{decodes}."
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


def rounds_since_best(
    steps: list[int], values: list[float], rounds: int, minimize: bool
) -> int | None:
    """The step of the best value (the first of equal ones), when the newest evaluation is
    ``rounds`` or more steps after it (tf.contrib.learn's ``ValidationMonitor``); else None."""
    if not steps:
        return None
    best = 0
    for i in range(1, len(values)):
        if (values[i] < values[best]) if minimize else (values[i] > values[best]):
            best = i
    return steps[best] if steps[-1] - steps[best] >= rounds else None


@dataclasses.dataclass
class EarlyStopping:
    """The run's evaluations of ``metric``; ``update`` says whether to stop. ``monitor``:
    ValidationMonitor's rule (``--schedule=train_and_evaluate``), else the hook's."""

    metric: str
    num_steps: int
    delta: float
    minimize: bool
    monitor: bool = False
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
        return self._decide()

    def _decide(self) -> bool:
        if self.monitor:
            self.since = rounds_since_best(self.steps, self.values, self.num_steps, self.minimize)
        else:
            self.since = has_plateaued(
                self.steps, self.values, self.num_steps, self.delta, self.minimize
            )
        return self.since is not None

    def reason(self) -> str:
        """Why the run stopped: the metric, the value it did not improve on, the best."""
        if self.since is None:
            return f"another worker's {self.metric} has plateaued"
        start = self.steps.index(self.since)
        way = "decreased" if self.minimize else "increased"
        if self.monitor:
            return (
                f"dev {self.metric} has not {way} in the {self.steps[-1] - self.since} steps "
                f"since its best evaluation of this job, at step {self.since} ({self.metric} "
                f"{self.values[start]:.4f}; --eval_early_stopping_steps={self.num_steps}, "
                "T2T's ValidationMonitor rule: no delta)"
            )
        sign = 1.0 if self.minimize else -1.0  # the best value; its first step on a tie
        best = min(range(len(self.values)), key=lambda i: (sign * self.values[i], self.steps[i]))
        return (
            f"dev {self.metric} has not {way} by {self.delta:g} or more in the "
            f"{self.steps[-1] - self.since} steps since step {self.since} ({self.metric} "
            f"{self.values[start]:.4f} there; best {self.values[best]:.4f} at step "
            f"{self.steps[best]}; --eval_early_stopping_steps={self.num_steps})"
        )

    def poll(self, output_dir: str) -> bool:
        """T2T's ``EarlyStoppingHook`` (``tensor2tensor/utils/metrics_hook.py``,
        ``_collect_metrics`` / ``_process_metrics``): reads the metric's values, as they are
        now, from the event files another job writes, in the first of ``EVENT_DIRS`` that
        holds it, and returns whether they have plateaued (not, while none holds it)."""
        for name in EVENT_DIRS:
            self._read(os.path.join(output_dir, name), sys.maxsize)
            if self.steps:
                break
        return self._decide()

    def read_history(self, output_dir: str, up_to_step: int, eval_dir: str = "eval") -> None:
        """A resumed run's evaluations so far, from the event files of ``eval_dir`` (where its
        schedule writes them: ``schedules.eval_writers``) up to ``up_to_step``; none for
        ValidationMonitor's rule, whose best value lives in the job's memory only (a T2T job
        resumed on ``train_and_evaluate`` starts afresh)."""
        if self.monitor:
            self.steps, self.values = [], []
            return
        self._read(os.path.join(output_dir, eval_dir), up_to_step)

    def _read(self, eval_dir: str, up_to_step: int) -> None:
        """The metric's values in ``eval_dir``'s event files (the last written for each
        step), under this project's name or T2T's ``metrics-<problem>/targets/<name>``."""
        found = {}
        for step, value in _eval_scalars(eval_dir, self.metric):
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
    listed = problem.teacher_forced_metrics()
    wanted = metric_name(cfg.eval_early_stopping_metric)
    decodes = cfg.eval_decode_examples and hparams.get("prepend_mode", "none") == "none"
    if wanted not in EVAL_METRICS + listed and decodes:  # (no dev decodes with prepend_mode)
        dev = problem.dev_metric(cfg.data_dir, hparams, cfg.eval_decode_examples)
        names = tuple(dev.names) if dev is not None else ()
    return EarlyStopping(
        check_metric(cfg.eval_early_stopping_metric, names, listed),
        cfg.eval_early_stopping_steps,
        cfg.eval_early_stopping_metric_delta,
        cfg.eval_early_stopping_metric_minimize,
        monitor=cfg.schedule in VALIDATION_MONITOR_SCHEDULES,
    )


def _eval_scalars(eval_dir: str, metric: str):
    """(step, value) of every scalar of ``metric`` (its tag or T2T's) in ``eval_dir``'s event
    files."""
    if not fileio.isdir(eval_dir):
        return
    import tensorflow as tf

    for name in sorted(fileio.listdir(eval_dir)):
        if not name.startswith("events.out.tfevents."):
            continue
        try:
            for event in tf.compat.v1.train.summary_iterator(os.path.join(eval_dir, name)):
                for value in event.summary.value:
                    if metric_name(value.tag) == metric:
                        number = (
                            float(tf.make_ndarray(value.tensor))
                            if value.HasField("tensor")
                            else value.simple_value
                        )
                        yield event.step, number
        except tf.errors.DataLossError:  # a file cut short by a killed run: its full records
            continue
