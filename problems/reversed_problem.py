"""T2T's ``<name>_rev`` for this project's problems (``register_with_rev``): the problem's files
read with inputs and targets swapped."""

from __future__ import annotations

import sys

from t2t_repro import registry
from t2t_repro.builtin.problems.base import DatagenSummary
from t2t_repro.data import records, reversal


class ReversedProblem:
    """T2T's ``<name>_rev`` (``Problem(was_reversed=True)``): the problem ``shards_of``'s files
    read with inputs and targets swapped (``problem.py``, ``maybe_reverse_features``, after
    the record's own reading and truncation), so a data dir T2T or this project wrote for
    ``<name>`` serves both. Its datagen writes ``<name>``'s files (T2T's t2t-datagen has no
    ``_rev`` names); its texts (``source_lines``) are swapped too (``reverse``)."""

    shards_of: str = ""

    def filepattern(self, data_dir: str, split: str) -> str:
        return records.filepattern(data_dir, self.shards_of, split)

    def read_example_fn(self, mode: str, hparams):
        """The base's reading of a record (its own, else the pipeline's parsing and
        truncation), then T2T's swap (``data/reversal.py``)."""
        from t2t_repro.data.input_pipeline import parse_and_truncate

        read = super().read_example_fn(mode, hparams) or parse_and_truncate(hparams)
        return lambda record: reversal.reverse_features(dict(read(record)))

    def get_encoders(self, data_dir: str) -> dict:
        """The base's encoders swapped (T2T's ``_reverse_problem_hparams`` swaps the
        vocabularies; the same objects where the two sides share one)."""
        encoders = super().get_encoders(data_dir)
        return {"inputs": encoders["targets"], "targets": encoders["inputs"]}

    def generate_data(self, data_dir: str, tmp_dir: str, *args, **kwargs) -> DatagenSummary:
        base = registry.problem(self.shards_of)
        announce_base_datagen(self.name, base.name, kwargs.get("progress", True))
        return base.generate_data(data_dir, tmp_dir, *args, **kwargs)


def announce_base_datagen(rev_name: str, base_name: str, progress: bool = True) -> None:
    """The line a _rev's datagen prints: it writes its base's files (T2T's t2t-datagen has no
    _rev names), which it reads swapped."""
    if progress:
        print(
            f"{rev_name} reads {base_name}'s files, inputs and targets swapped (T2T's _rev): "
            f"writing {base_name}'s",
            file=sys.stderr,
            flush=True,
        )


def register_with_rev(cls):
    """Register ``cls`` and ``<name>_rev`` (T2T's suffix: ``ReversedProblem``)."""
    base_name = cls.__dict__.get("problem_name") or registry.camelcase_to_snakecase(cls.__name__)
    registry.register_problem(base_name)(cls)
    rev = type(
        cls.__name__ + "Rev",
        (ReversedProblem, cls),
        {
            "problem_name": base_name + "_rev",
            "shards_of": base_name,
            "reverse": not cls.reverse,
            "vocab_name": cls.vocab_name or base_name,
            "__doc__": f"{base_name} with inputs and targets swapped (reads its files).",
            "__module__": cls.__module__,
            # a usr_dir's class, whose name T2T's registration set as a string (t2t_compat)
            **({"name": base_name + "_rev"} if isinstance(cls.__dict__.get("name"), str) else {}),
        },
    )
    registry.register_problem(base_name + "_rev")(rev)
    return cls
