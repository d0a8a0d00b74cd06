"""Datagen of a T2T ``Text2TextProblem``: T2T 1.15's ``Text2TextProblem.generate_data``
(``data_generators/text_problems.py``) mapped onto the project's datagen engine
(``data/datagen_engine.py``), so the vocab file and the shards are the ones T2T writes from the
same code and data.

``bin/t2t_datagen.py`` seeds Python's and numpy's ``random`` (``--random_seed``, 429459) before
each problem; T2T then writes every split's ``-unshuffled-`` shards with ``generate_files``
(one stream per split when ``is_generate_per_split``, else one stream dealt over all splits'
shards: that is how T2T splits a single corpus) and shuffles them in order with the global
``random`` (``shuffle_dataset``). The vocabulary is built when the first split's encoded
samples are asked for, from a pass of its own over the training samples
(``get_or_generate_vocab_inner``). A problem's own ``generate_data`` that calls this one
(``super()``) runs on the generators the tool seeded for it, and this call seeds nothing: T2T
seeds once per problem, whatever the problem's code drew first.

As every problem here, a rerun keeps finished shards and writes only missing ones, replaying
the kept shards' shuffle draws (the manifest ``<problem>.datagen.json`` says what they were
made with). A split whose shards are all kept is not generated again; if the problem's
generators draw from the global ``random`` (so that leaving a split out would change the
later shuffles), the rerun notices it and writes every shard again. A packed problem's
(``packed_length``) shuffled records are packed as T2T's ``shuffle_dataset(..., extra_fn=
_pack_fn())`` packs them (an ``already_shuffled`` one's are not: T2T skips its shuffle); a
rerun of one with a shard missing writes every shard again.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Iterable, Iterator

import numpy as np

from t2t_repro import fileio
from t2t_repro.builtin.problems.base import DEFAULT_SEED, DatagenSummary
from t2t_repro.data import datagen_engine, datagen_lib, records, t2t_shards
from t2t_repro.t2t_compat.problem import split_file_name
from t2t_repro.t2t_compat.refusals import T2TApiError


def _split_paths(problem, data_dir: str) -> list[tuple[str, list[str]]]:
    filepaths = {
        "train": problem.training_filepaths,
        "dev": problem.dev_filepaths,
        "test": problem.test_filepaths,
    }
    return [
        (
            split["split"],
            filepaths[split_file_name(split["split"])](
                data_dir, split["shards"], shuffled=problem.already_shuffled
            ),
        )
        for split in problem.dataset_splits
    ]


def _progress(samples: Iterable[dict], bar: datagen_lib.Progress) -> Iterator[dict]:
    for done, sample in enumerate(samples, 1):
        bar.update(done)
        yield sample
    bar.close()


def _serializer(summary: DatagenSummary):
    """``to_example`` bytes of a case, its tokens counted as written."""

    def serialize(case: dict) -> bytes:
        summary.input_tokens += len(case.get("inputs", ()))
        summary.target_tokens += len(case.get("targets", ()))
        return records.serialize_example(case, allow_empty=False)  # T2T's to_example

    return serialize


def _pool_encodes(problem) -> bool:
    """Whether the samples' texts can go to the encoding pool: T2T's own
    ``generate_encoded_samples`` over a subword vocab file (``text_problems.py``), of a problem
    with inputs (the pool writes pairs; a language model's records hold targets only)."""
    cls = type(problem)
    return (
        problem.has_inputs
        and getattr(cls.generate_encoded_samples, "pool_encodes", False)
        and getattr(cls.get_or_create_vocab, "pool_encodes", False)
        and problem.vocab_type == "subwords"
    )


def _texts(problem, data_dir: str, tmp_dir: str, split: str, max_cases: int | None):
    """T2T's ``generate_encoded_samples`` up to the encoding: the samples and the vocab (built
    now, as T2T builds it), then a stream of each sample's prefixed texts and other features,
    and the encoder (as built: its file read back can differ, text_encoder.py)."""
    samples = problem.generate_samples(data_dir, tmp_dir, split)
    encoder = problem.get_or_create_vocab(data_dir, tmp_dir)
    inputs_prefix, targets_prefix = problem.inputs_prefix, problem.targets_prefix

    def texts() -> Iterator[tuple[str, str, dict]]:
        for _, sample in t2t_shards.numbered_cases(samples, max_cases):
            other = {k: v for k, v in sample.items() if k not in ("inputs", "targets")}
            yield inputs_prefix + sample["inputs"], targets_prefix + sample["targets"], other

    return texts(), encoder


def _write_unshuffled(
    problem, run, split_paths, data_dir, tmp_dir, num_workers, max_cases, summary, progress
):
    """T2T's ``generate_files`` calls, for the streams with shards to write; returns whether
    a split was left out (all its shards kept)."""
    if problem.is_generate_per_split:
        streams = [
            (split, paths, run.todo_of(split_file_name(split))) for split, paths in split_paths
        ]
    else:
        streams = [("train", run.paths, sorted(run.todo))]
    skipped = False
    for split, paths, todo in streams:
        if not todo:
            skipped = True
            continue
        bar = datagen_lib.Progress(f"{problem.name} {split_file_name(split)}", enabled=progress)
        if _pool_encodes(problem):
            counts = datagen_engine.PairCounts()
            texts, encoder = _texts(problem, data_dir, tmp_dir, split, max_cases)
            datagen_engine.write_text_pairs(
                texts, paths, todo, encoder, counts, num_workers, bar=bar
            )
            summary.input_tokens += counts.input_tokens
            summary.target_tokens += counts.target_tokens
            continue
        samples = problem.generate_encoded_samples(data_dir, tmp_dir, split)
        t2t_shards.write_cases(
            _progress(samples, bar), paths, _serializer(summary), max_cases, todo=todo
        )
    return skipped


def generate_t2t_data(
    problem,
    data_dir: str,
    tmp_dir: str,
    num_workers: int | None = None,
    max_cases: int | None = None,
    random_seed: int | None = DEFAULT_SEED,
    progress: bool = True,
    trusted: bool = True,
    reseed: bool = True,
) -> DatagenSummary:
    """Vocab and shards of ``problem`` in ``data_dir`` as T2T 1.15 writes them. ``max_cases``
    caps each ``generate_files`` call (T2T's argument of that name); ``trusted=False`` writes
    every shard again, whatever is on disk. ``reseed=False``: the global generators were seeded
    with ``random_seed`` by the tool running the problem's own ``generate_data``, which may have
    drawn from them since: they are not seeded again (T2T seeds once per problem)."""
    start = time.monotonic()
    summary = DatagenSummary(problem.name, data_dir)
    fileio.makedirs(data_dir)
    split_paths = _split_paths(problem, data_dir)
    vocab_path = os.path.join(data_dir, problem.vocab_filename)
    run = datagen_engine.ShardRun(
        data_dir, problem.name, [(split_file_name(s), paths) for s, paths in split_paths]
    )
    trusted = trusted and run.manifest_matches(vocab_path, max_cases, random_seed)
    summary.shards_kept = run.plan(trusted)
    pack = problem._pack_fn() if callable(getattr(problem, "_pack_fn", None)) else None
    if pack is not None and run.todo and summary.shards_kept:
        # a kept packed shard does not say how many records its shuffle drew: write them all
        summary.shards_kept = run.plan(False)
    if run.todo:
        vocab_existed = fileio.isfile(vocab_path)
        if reseed:
            t2t_shards.seed_like_t2t_datagen(random_seed)
        fresh, fresh_numpy = random.getstate(), np.random.get_state()
        if progress:
            print(f"{problem.name}: writing {len(run.todo)} shards", file=sys.stderr, flush=True)
        args = (problem, run, split_paths, data_dir, tmp_dir, num_workers, max_cases)
        args += (summary, progress)
        if _write_unshuffled(*args) and random.getstate() != fresh:
            if not reseed:  # from the state this call found (Python's and numpy's) again
                random.setstate(fresh)
                np.random.set_state(fresh_numpy)
            return generate_t2t_data(  # a split left out would change the later draws
                problem,
                data_dir,
                tmp_dir,
                num_workers,
                max_cases,
                random_seed,
                progress,
                False,
                reseed,
            )
        manifest = dict(
            vocab_file=problem.vocab_filename,
            vocab_sha256=datagen_lib.file_sha256(vocab_path) if fileio.isfile(vocab_path) else None,
            max_cases=max_cases,
            seed=random_seed,
        )
        summary.pairs = run.finish(
            random, manifest, shuffle=not problem.already_shuffled, extra_fn=pack
        )
        summary.shards_written = len(run.todo)
        summary.vocab_built = not vocab_existed and fileio.isfile(vocab_path)
    else:
        summary.pairs = run.kept_pairs()
    try:  # feature_encoders, not get_encoders: a language model has no inputs (Text2SelfProblem)
        targets = problem.feature_encoders(data_dir)["targets"]
        if isinstance(targets, (list, tuple)):  # a multi-label usr_dir's encoder list
            targets = problem.get_encoders(data_dir)["targets"]  # its class_labels' encoder
        summary.vocab_size = targets.vocab_size
    except T2TApiError as e:  # T2T's datagen never asks for them; t2t-trainer refuses them
        summary.vocab_file = f"not read, the problem's feature_encoders are refused here: {e}"
    else:
        summary.vocab_file = _vocab_file(problem, vocab_path)
    summary.seconds = time.monotonic() - start
    return summary


def _vocab_file(problem, vocab_path: str) -> str:
    if problem.vocab_type == "character":
        return "ByteTextEncoder, no file"
    if fileio.isfile(vocab_path):
        return vocab_path
    return f"{type(problem).__name__}.feature_encoders"  # the problem's own, which read theirs
