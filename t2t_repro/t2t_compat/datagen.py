"""Datagen of a T2T ``Text2TextProblem``, step for step as T2T 1.15 does it, so the vocab file
and the shards are the ones T2T writes from the same code and data.

``bin/t2t_datagen.py`` seeds Python's and numpy's ``random`` (``--random_seed``, 429459) before
each problem; ``Text2TextProblem.generate_data`` (``data_generators/text_problems.py``) then
writes every split's ``-unshuffled-`` shards with ``generator_utils.generate_files`` (one call
per split when ``is_generate_per_split``, else one stream dealt over all splits' shards: that
is how T2T splits a single corpus) and shuffles them in order (``shuffle_dataset``). The
vocabulary is built when the first split's encoded samples are asked for, from a pass of its
own over the training samples (``get_or_generate_vocab_inner``).

Kept from T2T: a problem whose final shards all exist is skipped, and an existing vocab file is
used as it is. Not kept: T2T skips as soon as *one* final shard exists, which after an
interruption leaves a half-written data set; here, unless every shard is there, the problem's
shards are removed and written again (the shuffle must redo every file to be T2T's).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator

from problems.base import DEFAULT_SEED, DatagenSummary
from t2t_repro import fileio
from t2t_repro.t2t_compat import generator_utils
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


def _final(path: str) -> str:
    return path.replace(generator_utils.UNSHUFFLED_SUFFIX, "")


def _counted(samples: Iterable[dict], summary: DatagenSummary) -> Iterator[dict]:
    for sample in samples:
        if sample is not None:
            summary.input_tokens += len(sample.get("inputs", ()))
            summary.target_tokens += len(sample.get("targets", ()))
        yield sample


def generate_t2t_data(
    problem,
    data_dir: str,
    tmp_dir: str,
    max_cases: int | None = None,
    random_seed: int = DEFAULT_SEED,
    progress: bool = True,
) -> DatagenSummary:
    """Vocab and shards of ``problem`` in ``data_dir`` as T2T 1.15 writes them. ``max_cases``
    caps each ``generate_files`` call (T2T's argument of that name)."""
    start = time.monotonic()
    summary = DatagenSummary(problem.name, data_dir)
    fileio.makedirs(data_dir)
    split_paths = _split_paths(problem, data_dir)
    vocab_path = os.path.join(data_dir, problem.vocab_filename)
    all_paths = [p for _, paths in split_paths for p in paths]
    finals = [_final(p) for p in all_paths]
    if all(fileio.isfile(p) for p in finals):
        summary.shards_kept = len(finals)
    else:
        for path in sorted(set(finals + all_paths)):  # a half-written run: start afresh
            if fileio.exists(path):
                fileio.remove(path)
        vocab_existed = fileio.isfile(vocab_path)
        generator_utils.seed_like_t2t_datagen(random_seed)
        if progress:
            print(f"{problem.name}: writing {len(finals)} shards", file=sys.stderr, flush=True)
        counts: list[int] = []
        if problem.is_generate_per_split:
            for split, paths in split_paths:
                samples = problem.generate_encoded_samples(data_dir, tmp_dir, split)
                counts += generator_utils.generate_files(
                    _counted(samples, summary), paths, max_cases
                )
        else:
            samples = problem.generate_encoded_samples(data_dir, tmp_dir, "train")
            counts = generator_utils.generate_files(
                _counted(samples, summary), all_paths, max_cases
            )
        generator_utils.shuffle_dataset(all_paths)
        summary.shards_written = len(finals)
        summary.vocab_built = not vocab_existed and fileio.isfile(vocab_path)
        position = 0
        for split, paths in split_paths:
            name = split_file_name(split)
            summary.pairs[name] = sum(counts[position : position + len(paths)])
            position += len(paths)
    try:  # feature_encoders, not get_encoders: a language model has no inputs (Text2SelfProblem)
        summary.vocab_size = problem.feature_encoders(data_dir)["targets"].vocab_size
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
