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
        """Whether a flag selects tasks (T2T reads a negative --task_id as none)."""
        return self.task_id >= 0 or self.start != -1 or self.end != -1

    def describe(self) -> str:
        """The flags given, as typed."""
        if self.task_id >= 0:
            return f"--task_id={self.task_id}"
        names = (("--task_id_start", self.start), ("--task_id_end", self.end))
        return " ".join(f"{flag}={value}" for flag, value in names if value != -1)

    def note_no_tasks(self, name: str) -> None:
        """On stderr: the flags select nothing of a problem without generate tasks (T2T's
        ``generate_data`` ignores them), so all its data is written."""
        if self.given:
            print(
                f"note: {name} has no generate tasks: {self.describe()} selects none of them, "
                "as in T2T; generating all its data.",
                file=sys.stderr,
            )


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
        tasks.note_no_tasks(problem.name)
        t2t_generate_data(problem, data_dir, tmp_dir, *([None] if takes_task_id else []))
        return
    if not takes_task_id:
        raise DatagenTaskError(
            f"{name}: multiprocess_generate is True, but generate_data takes no task_id (T2T "
            "calls generate_data(data_dir, tmp_dir, task_id) for each task): give it a task_id "
            "parameter, or make multiprocess_generate False."
        )
    if tasks.start != -1:
        if tasks.end == -1:  # T2T's generate_data_for_registered_problem asserts it
            raise DatagenTaskError(
                f"--task_id_start={tasks.start} needs --task_id_end (the task after the last "
                f"to run) for {name}'s tasks, as T2T's t2t_datagen.py asserts."
            )
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
