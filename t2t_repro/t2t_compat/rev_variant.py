"""T2T's ``<name>_rev`` of a usr_dir's problem (``Problem(was_reversed=True)``, made by the
registry from the name: ``t2t_compat/problem.py``): its features, encoders and datagen, as
T2T's ``data_generators/problem.py`` has them."""

from __future__ import annotations

from t2t_repro.data import reversal
from t2t_repro.metrics import eval_metrics
from t2t_repro.t2t_compat import problem_hparams

# T2T's maybe_reverse_features of a _rev, maybe_copy_features of a _copy (data/reversal.py).
reverse_features, copy_features = reversal.reverse_features, reversal.copy_features


def vary_hparams(problem, p, error: type[Exception] | None = None) -> None:
    """T2T's ``get_hparams`` of a variant, in place: a _rev's reversed, then a _copy's copied
    (``_reverse_problem_hparams``, ``_copy_problem_hparams``); with ``error``, a _rev this
    project's transformer cannot run (class-label targets) is refused in one line."""
    if problem.was_reversed:
        if error is not None:
            problem_hparams.refuse_unreversible(problem, p, error)
        problem_hparams.reverse_problem_hparams(p)
    if problem._was_copy:
        problem_hparams.copy_problem_hparams(p)


def variant_encoders(problem, encoders: dict, error: type[Exception]) -> dict:
    """The tools' encoders of a variant, as its problem hparams' ``vocabulary``: a _rev's
    swapped, then a _copy's inputs for its targets."""
    if problem.was_reversed:
        encoders = swapped_encoders(problem, encoders, error)
    if problem._was_copy:
        if not problem.has_inputs:
            raise error(
                f"{problem_hparams.where(problem)}: T2T's _copy copies the inputs to the "
                f"targets, and this problem has no inputs; use --problem={problem.name}."
            )
        encoders = {"inputs": encoders["inputs"], "targets": encoders["inputs"]}
    return encoders


def variant_texts(problem, sources: list[str], targets: list[str]) -> tuple[list, list]:
    """A split's texts as a variant's records have them: swapped, then the inputs copied."""
    if problem.was_reversed:
        sources, targets = targets, sources
    if problem._was_copy:
        targets = list(sources)
    return sources, targets


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
        eval_metrics.tag_name(problem), problem.name, kwargs.get("progress", True)
    )
    return type(problem)(was_reversed=False, was_copy=False).generate_data(
        data_dir, tmp_dir, *args, **kwargs
    )
