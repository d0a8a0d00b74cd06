"""One problem's datagen run, for every problem: which shards to keep, writing the rest with
T2T 1.15's algorithm (``t2t_shards``), the manifest, the encoding pool and progress.

A run is T2T's ``Text2TextProblem.generate_data`` (``data_generators/text_problems.py``):
every split's examples are dealt into ``-unshuffled-`` files (``generate_files``), then all
files are shuffled in order from one generator (``shuffle_dataset``): the registered problems
pass ``random.Random(--random_seed)``, a T2T usr_dir problem T2T's global ``random``, seeded
the same way (``bin/t2t_datagen.py``). On top of T2T:

* Idempotence: ``<problem>.datagen.json`` records the vocab hash, ``max_cases``, seed, shard
  counts and pairs of the shards on disk. When it matches, finished shards are kept and only
  missing ones are written; their shuffles are replayed (``t2t_shards.shuffle_in_order``), so
  the files are those of one uninterrupted run. A data dir without a manifest (T2T's own) is
  trusted as it is; a manifest of another vocab, seed, ``max_cases`` or shuffle is not.
* Files are written to temp names and renamed; leftovers of an interrupted run are removed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from t2t_repro import fileio
from t2t_repro.data import datagen_lib, t2t_shards

SHUFFLE = "t2t-1.15"  # the manifest's name of the shuffle above (older manifests lack it)


class ShardRun:
    """The shards of one problem in ``data_dir``, in T2T's order: ``splits`` is
    ``[(split, unshuffled paths)]``; ``todo`` the indices (into ``paths``) to write."""

    def __init__(self, data_dir: str, name: str, splits: Sequence[tuple[str, list[str]]]):
        self.data_dir, self.name = data_dir, name
        self.paths = [p for _, paths in splits for p in paths]
        self.split_of = [split for split, paths in splits for _ in paths]
        self.splits = list(dict.fromkeys(self.split_of))
        self.manifest_path = os.path.join(data_dir, f"{name}.datagen.json")
        self.manifest = datagen_lib.load_json(self.manifest_path)
        self.todo: set[int] = set()

    @classmethod
    def of_splits(cls, data_dir: str, name: str, num_shards: Mapping[str, int]) -> ShardRun:
        """The shards of a project problem: ``num_shards`` per split, T2T's names."""
        return cls(
            data_dir,
            name,
            [(s, t2t_shards.unshuffled_paths(data_dir, name, s, n)) for s, n in num_shards.items()],
        )

    def manifest_matches(self, vocab_path: str | None, max_cases: int | None, seed: int) -> bool:
        """Whether the shards on disk were made as this run would make them."""
        m = self.manifest
        if m is None:
            return True
        vocab_hash = (
            datagen_lib.file_sha256(vocab_path)
            if vocab_path and fileio.isfile(vocab_path)
            else None
        )
        return (
            m.get("shuffle") == SHUFFLE
            and m.get("vocab_sha256") == vocab_hash
            and m.get("max_cases") == max_cases
            and m.get("seed") == seed
        )

    def plan(self, trusted: bool) -> int:
        """Removes an interrupted run's leftovers; ``todo`` = the shards missing (all, when
        not ``trusted``). Returns how many are kept."""
        for path in t2t_shards.leftovers(self.data_dir, self.name):
            fileio.remove(path)
        finals = [t2t_shards.final_path(p) for p in self.paths]
        self.todo = {i for i, p in enumerate(finals) if not (trusted and fileio.isfile(p))}
        return len(self.paths) - len(self.todo)

    def todo_of(self, split: str) -> list[int]:
        """The shards of ``split`` to write, as indices into the split's own paths."""
        first = self.split_of.index(split)
        return [i - first for i in sorted(self.todo) if self.split_of[i] == split]

    def split_paths(self, split: str) -> list[str]:
        return [p for p, s in zip(self.paths, self.split_of, strict=True) if s == split]

    def kept_pairs(self) -> dict:
        """Pairs per split from the manifest (a run with nothing to write)."""
        return dict((self.manifest or {}).get("pairs", {}))

    def _stale(self) -> list[str]:
        """Final shards of these splits with another shard count (left by another version)."""
        finals = {t2t_shards.final_path(p) for p in self.paths}
        out = []
        for split in self.splits:
            pattern = re.compile(re.escape(f"{self.name}-{split}-") + r"\d{5}-of-\d{5}$")
            for path in fileio.glob(os.path.join(self.data_dir, f"{self.name}-{split}-*")):
                if path not in finals and pattern.match(os.path.basename(path)):
                    out.append(path)
        return out

    def finish(
        self,
        rng: t2t_shards.Shuffler,
        manifest: dict,
        shuffle: bool = True,
        extra_fn: Callable[[list[bytes]], list[bytes]] | None = None,
    ) -> dict[str, int]:
        """After the unshuffled files of ``todo`` are written: the manifest (with ``manifest``'s
        vocab and settings), then T2T's shuffle of every file in order, each file's shuffled
        records passed through ``extra_fn`` (T2T's ``shuffle_dataset`` argument: a packed
        problem's ``_pack_fn``). Returns records per split."""
        for i in sorted(self.todo):
            final = t2t_shards.final_path(self.paths[i])
            if final != self.paths[i] and fileio.exists(final):
                fileio.remove(final)
        for path in self._stale():
            fileio.remove(path)
        manifest = dict(manifest, shuffle=SHUFFLE)
        manifest["num_shards"] = {s: self.split_of.count(s) for s in self.splits}
        datagen_lib.store_json(self.manifest_path, dict(manifest, pairs={}))
        if shuffle:
            counts = t2t_shards.shuffle_in_order(self.paths, rng, self.todo, extra_fn)
        else:  # already shuffled (T2T's ``already_shuffled``): the files are the finals
            counts = [t2t_shards.count_records(p) for p in self.paths]
        pairs = {s: 0 for s in self.splits}
        for split, count in zip(self.split_of, counts, strict=True):
            pairs[split] += count
        datagen_lib.store_json(self.manifest_path, dict(manifest, pairs=pairs))
        return pairs


class PairCounts:
    """Pairs read and tokens written by ``write_text_pairs``."""

    def __init__(self) -> None:
        self.read = self.input_tokens = self.target_tokens = 0


def write_text_pairs(
    pairs: Iterable[tuple],
    paths: Sequence[str],
    todo: Sequence[int],
    vocab_path,
    counts: PairCounts,
    num_workers: int | None = None,
    chunk_size: int = 2000,
    expected: int | None = None,
    bar: datagen_lib.Progress | None = None,
) -> None:
    """``generate_files`` of ``(source, target[, other features])`` texts into ``paths``' shards
    ``todo``: each pair encoded with the subword vocab at ``vocab_path`` (or that encoder) and
    EOS on both sides,
    by the encoding pool (``datagen_lib.encode_examples``); pairs of other shards are read but
    not encoded."""
    wanted_shards = set(todo)

    def wanted() -> Iterator[tuple]:
        for index, pair in enumerate(pairs):
            counts.read = index + 1
            if t2t_shards.shard_of(index, len(paths)) in wanted_shards:
                yield index, *pair

    def encoded() -> Iterator[tuple[int, bytes]]:
        for index, serialized, n_in, n_tgt in datagen_lib.encode_examples(
            wanted(), vocab_path, num_workers, chunk_size=chunk_size, expected_items=expected
        ):
            counts.input_tokens += n_in
            counts.target_tokens += n_tgt
            if bar is not None:
                bar.update(counts.read)
            yield index, serialized

    t2t_shards.write_round_robin(encoded(), paths, todo)
    if bar is not None:
        bar.update(counts.read)
        bar.close()
