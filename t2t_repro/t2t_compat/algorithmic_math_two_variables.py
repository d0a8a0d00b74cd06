"""``tensor2tensor.data_generators.algorithmic_math_two_variables``: T2T 1.15.7's
``algorithmic_math_two_variables``, Wangperawong's mathematical language understanding data
(arXiv:1812.02825): ``y=691,x=-999,y*x`` -> ``-690309``, with T2T's byte vocabulary.

T2T's ``generate_samples`` fetches ``mathematical_language_understanding_train.tar.gz`` into
--tmp_dir (with ``requests`` and a browser User-Agent, on every call), extracts it there and
reads ``symbolic_math_train.txt``: each line stripped and split on ``":"`` into inputs and
targets. Here the archive is fetched by the project's downloader (``data/download.py``, with
T2T's User-Agent) only when it is not in --tmp_dir already, then extracted there on every
read, as T2T does; with no archive there, ``symbolic_math_train.txt`` alone is read as it is
(the project's rule for an archive's extracted files). One stream (T2T's
``is_generate_per_split`` False) dealt round-robin over 10 train shards and 1 dev shard.

The file is read as T2T's ``open(path, "r")`` reads it: UTF-8 text whose lines end at
``\\n``, ``\\r\\n`` or a lone ``\\r``. A line that is not one ``:`` between two parts (a
blank line, or one with two ``:``), where T2T's unpacking raises ``ValueError``, and bytes
that are not UTF-8 (T2T's ``UnicodeDecodeError``) stop datagen in one line naming the file
and line, still a ``ValueError``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import requests

from t2t_repro import fileio
from t2t_repro.data import download
from t2t_repro.data.text_files import DataError, extract_all
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType
from t2t_repro.t2t_compat.text_iterators import TextLineError

_URL = "https://art.wangperawong.com/mathematical_language_understanding_train.tar.gz"
_TRAIN_FILE = "symbolic_math_train.txt"
# T2T's request header: a browser's User-Agent, sent as T2T sends it.
_USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_13_1) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/63.0.3239.132 Safari/537.36"
)


def _fetch_archive(tmp_dir: str) -> str:
    """The archive in ``tmp_dir``: kept when there, else downloaded with T2T's User-Agent."""
    fileio.makedirs(tmp_dir)
    filename = os.path.basename(_URL)
    path = os.path.join(tmp_dir, filename)
    if download.is_web_url(_URL) and not fileio.exists(path):
        session = requests.Session()
        session.headers["User-Agent"] = _USER_AGENT
        return download.fetch(_URL, path, session=session)
    return generator_utils.maybe_download(tmp_dir, filename, _URL)


def _download_mlu_data(tmp_dir: str, data_dir: str | None) -> str:
    """T2T's helper: the archive fetched and extracted into ``tmp_dir``, which is returned;
    ``data_dir`` made, as T2T makes it. Here the archive is fetched only when missing, and not
    at all when its text file alone is in ``tmp_dir`` (docs/datagen.md, Downloads)."""
    if data_dir:
        fileio.makedirs(data_dir)
    archive = os.path.join(tmp_dir, os.path.basename(_URL))
    if fileio.exists(archive) or not fileio.exists(os.path.join(tmp_dir, _TRAIN_FILE)):
        extract_all(_fetch_archive(tmp_dir), tmp_dir)  # on every run, as T2T's
    return tmp_dir


def problem_answer_pairs(path: str) -> Iterator[dict]:
    """T2T's samples of ``symbolic_math_train.txt``: each line of Python's ``open(path, "r")``
    (UTF-8; ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line) stripped and split on ``":"``."""
    try:
        with open(path, encoding="utf-8") as fp:
            for number, line in enumerate(fp, 1):
                parts = line.strip().split(":")
                if len(parts) != 2:
                    raise TextLineError(
                        f"{path}, line {number}: {line.strip()[:80]!r} has {len(parts) - 1} ':' "
                        "where T2T's algorithmic_math_two_variables reads '<problem>:<answer>' "
                        "with one, as in 'y=691,x=-999,y*x:-690309' (T2T's unpacking raises "
                        "ValueError)."
                    )
                yield {"inputs": parts[0], "targets": parts[1]}
    except UnicodeDecodeError:  # read ahead (T2T's too): which line, from the bytes
        raise _undecodable_line(path) from None


def _undecodable_line(path: str) -> TextLineError:
    """The first line of ``path`` that is not UTF-8, numbered as ``open(path, "r")`` numbers
    its lines (a byte \\r or \\n is never inside a UTF-8 character)."""
    number = 0
    with open(path, "rb") as f:
        for raw in f:
            raw = raw[:-1] if raw.endswith(b"\n") else raw
            raw = raw[:-1] if raw.endswith(b"\r") else raw
            for piece in raw.split(b"\r"):
                number += 1
                try:
                    piece.decode("utf-8")
                except UnicodeDecodeError as e:
                    return TextLineError(
                        f"{path}, line {number}: not UTF-8 ({e.reason} at byte {e.start} of "
                        "the line); T2T reads the file as UTF-8 text."
                    )
    return TextLineError(f"{path}: not UTF-8; T2T reads the file as UTF-8 text.")


@t2t_registry.register_problem
class AlgorithmicMathTwoVariables(Text2TextProblem):
    """Mathematical language understanding, see arxiv.org/abs/1812.02825 (T2T's class)."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def is_generate_per_split(self) -> bool:
        return False

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        # T2T's: the folders made, the archive extracted on every read, the one train file.
        download_path = _download_mlu_data(tmp_dir, data_dir)
        filepath = os.path.join(download_path, _TRAIN_FILE)
        if not fileio.exists(filepath):
            raise DataError(
                f"{filepath} is missing: {os.path.basename(_URL)} in {tmp_dir} does not hold "
                f"{_TRAIN_FILE} at its top, where T2T reads it."
            )
        yield from problem_answer_pairs(filepath)


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (AlgorithmicMathTwoVariables,)

__getattr__ = refusals.module_getattr(
    "tensor2tensor.data_generators.algorithmic_math_two_variables"
)
