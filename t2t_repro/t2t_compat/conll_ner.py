"""``tensor2tensor.data_generators.conll_ner``: T2T 1.15.7's CoNLL 2002 named-entity problems
under T2T's names: ``conll2002_es_ner`` (Spanish), ``conll2002_nl_ner`` (Dutch) and their base
``conll2002_ner``, which T2T registers too but cannot generate (it names no files).

NLTK's ``conll2002.zip`` (in --tmp_dir or downloaded there from T2T's address) is unzipped into
--tmp_dir when a file is missing from ``conll2002/``; train reads ``esp.train`` /
``ned.train``, dev ``esp.testa`` then ``esp.testb`` / ``ned.testa`` then ``ned.testb``. Each
sentence (lines up to a blank line, ``word POS tag``) is a sample: its words as the inputs, its
tags as the targets; an empty one where two blank lines meet, as T2T's. As
``text2text_tmpdir`` (its T2T base), a 2^15 subword vocabulary and 100 train shards, 1 dev.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, T2TProblemError
from t2t_repro.t2t_compat.text_iterators import TextLineError, txt_line_iterator
from t2t_repro.t2t_compat.tmpdir_problems import Text2textTmpdir

_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/conll2002.zip"


def _sentences(path: str) -> Iterator[dict]:
    """Each blank-line-ended sentence of a CoNLL file: words (1st column), tags (3rd)."""
    words: list[str] = []
    tags: list[str] = []
    for number, line in enumerate(txt_line_iterator(path), 1):
        fields = line.split()
        if not fields:
            yield {"inputs": " ".join(words), "targets": " ".join(tags)}
            words, tags = [], []
            continue
        if len(fields) < 3:
            raise TextLineError(f"{path}, line {number}: no 3rd column (the tag).")
        words.append(fields[0])
        tags.append(fields[2])
    if words:
        yield {"inputs": " ".join(words), "targets": " ".join(tags)}


@t2t_registry.register_problem
class Conll2002Ner(Text2textTmpdir):
    """T2T's base class; a subclass gives ``source_data_files``."""

    def source_data_files(self, dataset_split: str) -> list[str]:
        """The files of ``conll2002/`` read for ``dataset_split``."""
        raise T2TProblemError(
            f"{type(self).__name__} ({self.name}) is T2T's base of the CoNLL 2002 problems and "
            "names no files: use conll2002_es_ner or conll2002_nl_ner."
        )

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        del data_dir
        name = os.path.basename(_URL)
        archive = os.path.join(tmp_dir, name)
        generator_utils.maybe_download(tmp_dir, name, _URL)
        # T2T's folder: the zip's path with the characters of ".zip" stripped at both ends.
        folder = archive.strip(".zip")
        for filename in self.source_data_files(dataset_split):
            path = os.path.join(folder, filename)
            if not fileio.exists(path):
                with zipfile.ZipFile(archive, "r") as corpus:
                    corpus.extractall(tmp_dir)
            yield from _sentences(path)

    def check_datagen(self) -> None:
        """The base's one line before any file is written (T2T fails on its first sample)."""
        if type(self).source_data_files is Conll2002Ner.source_data_files:
            self.source_data_files(DatasetSplit.TRAIN)
        super().check_datagen()


class _Language(Conll2002Ner):
    TRAIN_FILES: list[str] = []
    EVAL_FILES: list[str] = []

    def source_data_files(self, dataset_split: str) -> list[str]:
        train = dataset_split == DatasetSplit.TRAIN
        return self.TRAIN_FILES if train else self.EVAL_FILES


@t2t_registry.register_problem
class Conll2002EsNer(_Language):
    """CoNLL 2002's Spanish named entities."""

    TRAIN_FILES = ["esp.train"]
    EVAL_FILES = ["esp.testa", "esp.testb"]


@t2t_registry.register_problem
class Conll2002NlNer(_Language):
    """CoNLL 2002's Dutch named entities."""

    TRAIN_FILES = ["ned.train"]
    EVAL_FILES = ["ned.testa", "ned.testb"]


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (Conll2002Ner, Conll2002EsNer, Conll2002NlNer)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.conll_ner")
