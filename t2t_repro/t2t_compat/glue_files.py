"""How T2T 1.15.7's classification problems (``data_generators/sst_binary.py``, ``cola.py``,
``mrpc.py``, ``qnli.py``, ``quora_qpairs.py``, ``rte.py``, ``wnli.py``, ``scitail.py``,
``stanford_nli.py``, ``multinli.py``) find and read their corpora, shared by
``sentiment_problems.py`` and ``glue_problems.py`` so that each problem there is only T2T's
facts: its file names, its columns, its labels.

Each reads a folder that its zip (in --tmp_dir, or downloaded there) extracts into --tmp_dir,
when that folder is not there yet; then the folder's train or dev file, as T2T reads it:
``tf.gfile.Open(path, "rb")`` lines (split at ``\\n`` only), each line's bytes stripped, decoded
as UTF-8 and split at tabs. Where T2T's reader fails on a row (a missing column, a label that
is not one of the problem's), the error here is one line naming the file and line, of T2T's
type (``IndexError`` for a missing column, ``ValueError`` for a label).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import generator_utils
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, TaskID
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_iterators import TextLineError

# The GLUE downloads T2T's modules name (their "Link to data from GLUE" urls): the file name
# after "data%2F", then T2T's access token of it.
GLUE_URL = (
    "https://firebasestorage.googleapis.com/v0/b/mtl-sentence-representations.appspot.com/o/data%2F"
)


def glue_url(name: str, token: str) -> str:
    """T2T's url of a GLUE file (``cola.py``, ``_COLA_URL``, and its siblings)."""
    return f"{GLUE_URL}{name}?alt=media&token={token}"


def extracted_folder(tmp_dir: str, folder: str, zip_name: str, url: str) -> str:
    """``tmp_dir/folder``; when it is not there, the zip ``zip_name`` (found in ``tmp_dir`` or
    downloaded there from ``url``) is extracted into ``tmp_dir`` first (T2T's
    ``_maybe_download_corpora`` of each module)."""
    path = os.path.join(tmp_dir, folder)
    if not fileio.exists(path):
        archive = generator_utils.maybe_download(tmp_dir, zip_name, url)
        generator_utils.extract_zip(archive, tmp_dir)
    return path


class MissingFieldError(TextLineError, IndexError):
    """A line without the field T2T's reader indexes (T2T's IndexError): one line."""


class Row:
    """A line of a corpus file as T2T's readers split it, and where it is (for errors)."""

    def __init__(self, path: str, index: int, fields: list[str]) -> None:
        self.path, self.index, self.fields = path, index, fields

    def error(self, what: str) -> TextLineError:
        return TextLineError(f"{self.path}, line {self.index + 1}: {what}")

    def take(self, count: int) -> list[str]:
        """All the fields, which must be ``count`` (T2T unpacks them)."""
        if len(self.fields) != count:
            raise self.error(
                f"{len(self.fields)} tab-separated fields where T2T's reader unpacks {count}."
            )
        return self.fields

    def field(self, index: int) -> str:
        """One field (T2T's ``split_line[index]``, an IndexError there too)."""
        try:
            return self.fields[index]
        except IndexError:
            raise MissingFieldError(
                f"{self.path}, line {self.index + 1}: {len(self.fields)} tab-separated fields; "
                f"T2T's reader takes field {index}."
            ) from None

    def label_id(self, text: str, labels: list[str]) -> int:
        """``labels.index(text)`` (T2T's), or one line naming the labels."""
        if text not in labels:
            raise self.error(f"label {text!r} is not one of {labels}.")
        return labels.index(text)

    def integer(self, text: str) -> int:
        """``int(text)`` (T2T's label of an integer column), or one line."""
        try:
            return int(text)
        except ValueError:
            raise self.error(f"label {text!r} is not an integer.") from None


def rows(path: str, skip_header: bool) -> Iterator[Row]:
    """The lines of ``path`` as T2T's readers split them (``tf.gfile.Open(path, "rb")``, each
    line stripped, ``to_unicode_utf8``, ``split("\\t")``); the first is skipped when T2T skips
    it as a header."""
    if not fileio.exists(path):
        raise DataError(
            f"{path} is missing: remove its folder from --tmp_dir so that T2T's archive is "
            "extracted again, or put the file there."
        )
    with tf.io.gfile.GFile(path, "rb") as f:
        for index, line in enumerate(f):
            if skip_header and index == 0:
                continue
            try:
                text = line.strip().decode("utf-8")
            except UnicodeDecodeError as e:
                raise TextLineError(
                    f"{path}, line {index + 1}: not UTF-8 ({e.reason}), which T2T's reader "
                    "(to_unicode_utf8) requires."
                ) from None
            yield Row(path, index, text.split("\t"))


class GlueTask:
    """What T2T's GLUE-style problems share (``cola.py``, ``qnli.py``, ...), set here by class
    attributes: a split per file, ``_TRAIN_SHARDS`` train shards and one eval shard, a
    vocabulary of ``_VOCAB_SIZE``, the classes ``_LABELS``; ``generate_samples`` reads
    ``example_generator`` of the train file for TRAIN, of the dev file for any other split
    (``_FILES``), in the folder ``_maybe_download_corpora`` gives. Put it before T2T's problem
    class among the bases."""

    _FILES = ("train.tsv", "dev.tsv")
    _TRAIN_SHARDS = 10
    _VOCAB_SIZE = 2**13
    _LABELS: tuple[str, ...] = ()

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": self._TRAIN_SHARDS},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def approx_vocab_size(self) -> int:
        return self._VOCAB_SIZE

    @property
    def num_classes(self) -> int:
        return len(self._LABELS)

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return list(self._LABELS)

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        raise NotImplementedError()

    def example_generator(self, filename: str) -> Iterator[dict]:
        raise NotImplementedError()

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        folder = self._maybe_download_corpora(tmp_dir)
        name = self._FILES[0 if dataset_split == DatasetSplit.TRAIN else 1]
        yield from self.example_generator(os.path.join(folder, name))


def characters(base: type, name: str, task_id: int, module: str) -> type:
    """T2T's ``<Base>Characters`` problem of ``base``, registered: its byte vocabulary
    (``VocabType.CHARACTER``) and T2T's ``global_task_id`` (``problem.py``, ``TaskID``)."""
    attributes = {
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"T2T's {base.__name__}, character level.",
        "vocab_type": property(lambda self: VocabType.CHARACTER),
        "global_task_id": lambda self: task_id,
    }
    return t2t_registry.register_problem(type(name, (base,), attributes))


# T2T's TaskID values (problem.py) that its character-level problems return.
EN_CHR_SENT, EN_NLI, COLA = TaskID.EN_CHR_SENT, TaskID.EN_NLI, TaskID.COLA
EN_SIM, THREE_CL_NLI = TaskID.EN_SIM, TaskID.THREE_CL_NLI
