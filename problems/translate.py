"""``TranslateProblem``: parallel text files in ``tmp_dir`` -> a shared-vocab translation problem.

A subclass declares, per split, the parallel corpora it reads, relative to ``tmp_dir``::

    @register_problem
    class TranslateXxYy(TranslateProblem):
        approx_vocab_size = 2**13
        source_files = {
            "train": [("corpus1.xx", "corpus1.yy"), ("corpus2.xx.gz", "corpus2.yy.gz")],
            "dev": [("dev.xx", "dev.yy")],
            "test": ["test.tsv"],          # or one TSV file: source<TAB>target
        }

Files may be plain or gzip-compressed text, one sentence per line, aligned line by line. The
vocabulary is one SubwordTextEncoder shared by both sides, built from ~1 MB of each training
file (T2T's ``generate_lines_for_vocab``). Splits without files are not generated.
"""

from __future__ import annotations

from t2t_repro import fileio
from t2t_repro.builtin.problems.base import Text2TextProblem
from t2t_repro.data.pair_sources import PairSource, parallel_source
from t2t_repro.data.text_files import DataError


class TranslateProblem(Text2TextProblem):
    """Translation from local parallel text files (see module docstring)."""

    num_shards = {"train": 100, "dev": 1}  # T2T's translate default
    approx_vocab_size = 2**15
    # split -> list of (source, target) paths or TSV paths, relative to tmp_dir
    source_files: dict = {}

    @property
    def splits(self) -> tuple:
        """The splits in ``num_shards`` that have files (all of them when ``source_files`` is
        unused)."""
        if not self.source_files:
            return super().splits
        return tuple(s for s in super().splits if self.source_files.get(s))

    def prepare_tmp_dir(self, tmp_dir: str, split: str) -> None:
        """Hook: fetch or unpack the raw files of ``split`` into tmp_dir (default: nothing)."""

    def missing_data_help(self, tmp_dir: str, split: str) -> str:
        """Hook: how to obtain the data, appended to the DataError for missing files."""
        return f"Put the {self.name} {split} files in {tmp_dir} (--tmp_dir)."

    def split_sources(self, tmp_dir: str, split: str) -> list[PairSource]:
        specs = self.source_files.get(split, [])
        if not specs:
            return []
        self.prepare_tmp_dir(tmp_dir, split)
        sources = [parallel_source(spec, tmp_dir) for spec in specs]
        missing = [p for s in sources for p in _paths(s) if not fileio.isfile(p)]
        if missing:
            raise DataError(
                f"{self.name}: missing {split} data: {', '.join(missing)}. "
                + self.missing_data_help(tmp_dir, split)
            )
        return sources


def _paths(source: PairSource) -> list[str]:
    return [
        p
        for p in (
            getattr(source, "source_path", None),
            getattr(source, "target_path", None),
            getattr(source, "path", None),
        )
        if p
    ]
