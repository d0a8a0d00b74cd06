"""Your own parallel corpus as a problem, with no code beyond one call (or none at all).

**No code:** the registered ``parallel_corpus`` problem reads, from ``--tmp_dir``, for each
split ``train``, ``dev``, ``test`` either two aligned files ``<split>.src`` + ``<split>.tgt``
or one TSV ``<split>.tsv`` (``source<TAB>target``); ``.gz`` versions of each work too. ``train``
is required, ``dev`` and ``test`` are generated when present::

    t2t-datagen --problem=parallel_corpus --tmp_dir=~/my_corpus --data_dir=~/t2t_data/mine

Environment variables tune it (read when the problem is created, so set them for the trainer
and decoder as well): ``T2T_PARALLEL_CORPUS_VOCAB_SIZE`` (default 8192; part of the vocab file
name ``vocab.parallel_corpus.<size>.subwords``) and ``T2T_PARALLEL_CORPUS_TRAIN_SHARDS``
(default 10).

**One call, your own name:** in a module that ``problems/__init__.py`` (or a ``--t2t_usr_dir``
module) imports::

    from t2t_repro.builtin.problems.parallel_corpus import register_parallel_corpus

    register_parallel_corpus(
        "translate_xxyy_mine",
        train=[("/data/a.xx", "/data/a.yy"), "/data/b.tsv.gz"],  # several corpora are concatenated
        dev=("/data/dev.xx", "/data/dev.yy"),
        test="/data/test.tsv",
        vocab_size=2**14,
    )

Paths may be relative to ``--tmp_dir``. Either way one subword vocab is shared by both sides and
built from ~1 MB of each training file; empty pairs are dropped and undecodable bytes replaced
(both counted in the datagen summary); mismatched line counts stop datagen with both file names.
"""

from __future__ import annotations

import os

from t2t_repro import registry
from t2t_repro.builtin.problems.base import Text2TextProblem
from t2t_repro.builtin.problems.reversed_problem import register_with_rev
from t2t_repro.data.pair_sources import PairSource, parallel_source
from t2t_repro.data.text_files import DataError


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise DataError(f"{name}={value!r} is not an integer.") from None


def _as_list(spec) -> list:
    """One spec ((src, tgt) or a TSV path) or a list of them -> list of specs."""
    if spec is None:
        return []
    if isinstance(spec, (str, os.PathLike, PairSource)):
        return [spec]
    if (
        isinstance(spec, tuple)
        and len(spec) == 2
        and all(isinstance(p, (str, os.PathLike)) for p in spec)
    ):
        return [spec]
    return list(spec)


class ParallelCorpusProblem(Text2TextProblem):
    """Parallel text given per split as file specs (see module docstring)."""

    split_specs: dict = {}  # split -> list of specs
    num_shards = {"train": 10, "dev": 1, "test": 1}
    approx_vocab_size = 2**13

    @property
    def splits(self) -> tuple:
        return tuple(s for s in super().splits if self.split_specs.get(s))

    def split_sources(self, tmp_dir: str, split: str) -> list[PairSource]:
        specs = self.split_specs.get(split) or []
        if not specs:
            raise DataError(f"{self.name}: no {split} data configured.")
        return [parallel_source(spec, tmp_dir) for spec in specs]


def register_parallel_corpus(
    name: str,
    train,
    dev=None,
    test=None,
    vocab_size: int = 2**13,
    train_shards: int = 10,
    with_rev: bool = True,
) -> type:
    """Register problem ``name`` (and ``name_rev`` unless ``with_rev=False``) over the given files.

    Each of ``train``/``dev``/``test`` is a ``(source_path, target_path)`` pair, a TSV path, or a
    list of those. Returns the new problem class.
    """
    specs = {
        split: _as_list(spec) for split, spec in (("train", train), ("dev", dev), ("test", test))
    }
    if not specs["train"]:
        raise ValueError(f"register_parallel_corpus({name!r}): train data is required.")
    cls = type(
        registry.camelcase_to_snakecase(name).title().replace("_", ""),
        (ParallelCorpusProblem,),
        {
            "problem_name": name,
            "split_specs": specs,
            "approx_vocab_size": vocab_size,
            "num_shards": {"train": train_shards, "dev": 1, "test": 1},
            "__doc__": f"User parallel corpus {name!r}.",
            "__module__": __name__,
        },
    )
    return register_with_rev(cls) if with_rev else registry.register_problem(name)(cls)


def _local_split(tmp_dir: str, split: str):
    """``<split>.src``/``<split>.tgt`` or ``<split>.tsv`` in tmp_dir (``.gz`` allowed), else
    None."""
    for ext in ("", ".gz"):
        src, tgt = (os.path.join(tmp_dir, f"{split}.{side}{ext}") for side in ("src", "tgt"))
        if os.path.isfile(src) and os.path.isfile(tgt):
            return (src, tgt)
        tsv = os.path.join(tmp_dir, f"{split}.tsv{ext}")
        if os.path.isfile(tsv):
            return tsv
    return None


@register_with_rev
class ParallelCorpus(ParallelCorpusProblem):
    """``tmp_dir/{train,dev,test}.{src,tgt}`` or ``tmp_dir/{train,dev,test}.tsv`` (see module
    docstring)."""

    def __init__(self):
        self.approx_vocab_size = _env_int("T2T_PARALLEL_CORPUS_VOCAB_SIZE", 2**13)
        self.num_shards = {
            "train": _env_int("T2T_PARALLEL_CORPUS_TRAIN_SHARDS", 10),
            "dev": 1,
            "test": 1,
        }
        self._tmp_dir = None

    @property
    def splits(self) -> tuple:
        if self._tmp_dir is None:  # not yet told where the data is: every split may be there
            return tuple(self.num_shards)
        return tuple(s for s in self.num_shards if s == "train" or _local_split(self._tmp_dir, s))

    def generate_data(self, data_dir, tmp_dir, num_workers=None, **kwargs):
        self._tmp_dir = tmp_dir
        return super().generate_data(data_dir, tmp_dir, num_workers, **kwargs)

    def split_sources(self, tmp_dir: str, split: str) -> list[PairSource]:
        spec = _local_split(tmp_dir, split)
        if spec is None:
            raise DataError(
                f"{self.name}: no {split} data in {tmp_dir}: expected {split}.src + {split}.tgt "
                f"(aligned lines) or {split}.tsv (source<TAB>target), optionally .gz."
            )
        return [parallel_source(spec)]
