"""Which generate tasks of a usr_dir problem ``t2t-datagen`` runs, as T2T 1.15.7's
``bin/t2t_datagen.py, generate_data_for_registered_problem`` picks them.

T2T spreads a big datagen over machines with ``--task_id`` (each machine runs
``generate_data(data_dir, tmp_dir, task_id)`` once, for any problem: a ``Text2TextProblem``
ignores the id and writes everything) or, for a ``multiprocess_generate`` problem,
``--task_id_start``/``--task_id_end`` (``prepare_to_generate``, then the tasks of that range;
without them, every task of ``num_generate_tasks``).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from t2t_repro.errors import UserError


class DatagenTaskError(UserError):
    """A problem's generate tasks cannot run as asked (one line)."""


@dataclass(frozen=True)
class DatagenTasks:
    """``t2t-datagen``'s ``--task_id``, ``--task_id_start``, ``--task_id_end`` (T2T's -1: not
    given)."""

    task_id: int = -1
    start: int = -1
    end: int = -1

    @property
    def given(self) -> bool:
        return self != DatagenTasks()

    def check(self) -> None:
        """T2T asserts ``--task_id_end`` beside ``--task_id_start``; one line here."""
        if self.start != -1 and self.end == -1:
            raise DatagenTaskError(
                f"--task_id_start={self.start} needs --task_id_end (the task after the last to "
                "run), as T2T's t2t_datagen.py asserts."
            )

    def describe(self) -> str:
        if self.task_id >= 0:
            return f"--task_id={self.task_id}"
        return f"--task_id_start={self.start} --task_id_end={self.end}"


ALL_TASKS = DatagenTasks()


def run_as_t2t_datagen(
    problem: Any,
    t2t_generate_data: Callable,
    data_dir: str,
    tmp_dir: str,
    tasks: DatagenTasks = ALL_TASKS,
) -> None:
    """T2T's calls of a problem's own ``generate_data``: the task id ``--task_id`` gives (None
    without it), or, for a ``multiprocess_generate`` problem without it, ``prepare_to_generate``
    then each task id of the range (T2T runs them in a pool; here in turn: the same files). A
    ``generate_data`` without a task id parameter gets none."""
    name = type(problem).__name__
    takes_task_id = len(inspect.signature(t2t_generate_data).parameters) >= 4
    if tasks.task_id >= 0:  # T2T: problem.generate_data(data_dir, tmp_dir, task_id)
        if not takes_task_id:
            raise DatagenTaskError(
                f"{name}.generate_data takes no task_id, which --task_id={tasks.task_id} "
                "passes it (T2T calls generate_data(data_dir, tmp_dir, task_id)); run without "
                "--task_id."
            )
        t2t_generate_data(problem, data_dir, tmp_dir, tasks.task_id)
        return
    if not problem.multiprocess_generate:
        if tasks.given:
            print(
                f"note: {name} is not multiprocess_generate: {tasks.describe()} selects none of "
                "its tasks, as in T2T; generating all its data.",
                file=sys.stderr,
            )
        t2t_generate_data(problem, data_dir, tmp_dir, *([None] if takes_task_id else []))
        return
    if not takes_task_id:
        raise DatagenTaskError(
            f"{name}: multiprocess_generate is True, but generate_data takes no task_id (T2T "
            "calls generate_data(data_dir, tmp_dir, task_id) for each task)."
        )
    if tasks.start != -1:
        task_ids = range(tasks.start, tasks.end)
    else:
        if tasks.end != -1:
            print(
                f"note: --task_id_end={tasks.end} without --task_id_start selects nothing, as in "
                f"T2T: all {problem.num_generate_tasks} tasks of {name} run.",
                file=sys.stderr,
            )
        task_ids = range(problem.num_generate_tasks)
    problem.prepare_to_generate(data_dir, tmp_dir)
    for task_id in task_ids:
        t2t_generate_data(problem, data_dir, tmp_dir, task_id)
