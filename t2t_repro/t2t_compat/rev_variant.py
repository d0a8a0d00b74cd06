"""T2T's ``<name>_rev`` of a usr_dir's problem (``Problem(was_reversed=True)``, made by the
registry from the name: ``t2t_compat/problem.py``): its features, encoders and datagen, as
T2T's ``data_generators/problem.py`` has them."""

from __future__ import annotations

from t2t_repro.data import reversal
from t2t_repro.t2t_compat import problem_hparams

# T2T's maybe_reverse_features of a _rev (one implementation for every _rev: data/).
reverse_features = reversal.reverse_features


def swapped_encoders(problem, encoders: dict, error: type[Exception]) -> dict:
    """A _rev's encoders for the tools, swapped as T2T's ``_reverse_problem_hparams`` swaps
    the ``vocabulary`` its decoder encodes with; a _rev of a problem without inputs (a
    language model) would have no targets: ``error``, one line."""
    if not problem.has_inputs:
        raise error(
            f"{problem_hparams.where(problem)}: T2T's _rev of a problem without inputs moves "
            "its targets to the inputs, leaving no targets to learn or decode; use "
            f"--problem={problem.name}."
        )
    return {"inputs": encoders["targets"], "targets": encoders["inputs"]}


def generate_base_data(problem, data_dir, tmp_dir, *args, **kwargs):
    """A _rev's datagen writes its base's files, which it reads (T2T's t2t-datagen has no _rev
    names): the base problem's ``generate_data``, said on stderr."""
    from t2t_repro.builtin.problems.reversed_problem import announce_base_datagen

    announce_base_datagen(
        problem_hparams.shown_name(problem), problem.name, kwargs.get("progress", True)
    )
    return type(problem)(was_reversed=False, was_copy=False).generate_data(
        data_dir, tmp_dir, *args, **kwargs
    )
