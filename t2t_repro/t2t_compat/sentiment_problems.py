"""T2T 1.15.7's sentiment classification problems (``data_generators/imdb.py``,
``sst_binary.py``, ``yelp_polarity.py``, ``yelp_full.py``), registered under T2T's names with
T2T's datagen: the same corpus files (downloaded into --tmp_dir, or the archives already
there), vocabularies, shards, problem hparams and metrics. IMDB and SST train as text
classifiers (``--model=transformer_encoder``, docs/classification.md); each ``...Characters``
variant with T2T's byte vocabulary.

T2T's quirks are kept, since its data are what a T2T-trained model saw: IMDB's reviews are read
in ``os.listdir`` order (which differs between file systems: so does T2T's); Yelp's csv lines
are not parsed (the label is a line's second character, the review its characters from the
sixth to the last two, doubled quotes and ``\\n`` escapes kept), and its labels are the csv's
own numbers: 1 and 2 for the polarity set, 1 to 5 for the full one, with ``num_classes`` 2 and
5 as in T2T, so class 0 never occurs and the top label is out of range. T2T's loss takes that
label as no class at all (``layers/common_layers.py``, ``smoothing_cross_entropy``: its
``one_hot`` has no hot entry); this project's loss cannot, so the trainer and decoder refuse
T2T's Yelp problems in one line (``unsupported``), while datagen writes T2T's records.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.data.text_files import extract_all
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import generator_utils, t2t_modules
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.glue_files import (
    EN_CHR_SENT,
    GlueTask,
    characters,
    extracted_folder,
    glue_url,
    rows,
)
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text_iterators import TextLineError
from t2t_repro.t2t_compat.text_kinds import Text2ClassProblem


def _extracted(tmp_dir: str, url: str, folder: str) -> str:
    """T2T's ``generate_samples`` of ``imdb.py`` and ``yelp_*.py``: the archive ``url`` names
    (in --tmp_dir or downloaded there, looked for first, as T2T does), extracted into tmp_dir
    when ``folder`` is not there."""
    archive = generator_utils.maybe_download(tmp_dir, os.path.basename(url), url)
    path = os.path.join(tmp_dir, folder)
    if not fileio.exists(path):
        extract_all(archive, tmp_dir)
    return path


class _Reviews(Text2ClassProblem):
    """The split sizes and vocabulary T2T's IMDB and Yelp problems share."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def approx_vocab_size(self) -> int:
        return 2**13


@t2t_registry.register_problem
class SentimentIMDB(_Reviews):
    """IMDB movie reviews, negative or positive (T2T's ``imdb.py``): ``aclImdb_v1.tar.gz``'s
    ``train`` folders for TRAIN, its ``test`` folders for EVAL."""

    URL = "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"

    @property
    def num_classes(self) -> int:
        return 2

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return ["neg", "pos"]

    def doc_generator(
        self, imdb_dir: str, dataset: str, include_label: bool = False
    ) -> Iterator[object]:
        """Each review of ``imdb_dir/dataset``, ``pos`` then ``neg``, each folder's files in
        ``os.listdir`` order, its text stripped; with ``include_label``, ``(text, is_pos)``."""
        for folder, label in (("pos", True), ("neg", False)):
            path = os.path.join(imdb_dir, dataset, folder)
            if not os.path.isdir(path):
                raise DataError(
                    f"{path} is missing: {imdb_dir} is not the aclImdb folder of {self.URL}; "
                    "remove it from --tmp_dir so that the archive is extracted again."
                )
            for name in os.listdir(path):
                with tf.io.gfile.GFile(os.path.join(path, name)) as f:
                    doc = f.read().strip()
                yield (doc, label) if include_label else doc

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        imdb_dir = _extracted(tmp_dir, self.URL, "aclImdb")
        dataset = "train" if dataset_split == DatasetSplit.TRAIN else "test"
        for doc, label in self.doc_generator(imdb_dir, dataset, include_label=True):
            yield {"inputs": doc, "label": int(label)}


class _Yelp(_Reviews):
    """T2T's Yelp reviews (``yelp_polarity.py``, ``yelp_full.py``): the csv files of the
    archive ``URL`` names, ``train.csv`` for TRAIN and ``test.csv`` for EVAL."""

    URL = ""
    _FOLDER = ""

    @property
    def num_classes(self) -> int:
        return len(self.class_labels(None))

    @property
    def unsupported(self) -> str | None:
        """Why the trainer and decoder refuse T2T's Yelp records (datagen writes them): their
        top label equals ``num_classes``, which T2T's loss takes as no class at all (its
        ``one_hot`` has no hot entry) and this project's cannot take; None for a subclass that
        reads its own samples (``generate_samples`` or ``doc_generator``)."""
        cls = type(self)
        if cls.generate_samples is not _Yelp.generate_samples:
            return None
        if cls.doc_generator is not _Yelp.doc_generator:
            return None
        n = self.num_classes
        return (
            f"T2T 1.15.7's datagen writes Yelp's own labels 1 to {n} for {n} classes (0 to "
            f"{n - 1}), so label {n} is out of range, which T2T trains on as no class and this "
            "project's loss cannot; train a usr_dir subclass whose generate_samples yields "
            "label - 1 (docs/porting.md)."
        )

    def doc_generator(
        self, yelp_dir: str, dataset: str, include_label: bool = False
    ) -> Iterator[object]:
        """Each line of ``dataset.csv`` as T2T cuts it: ``(review, label character)``."""
        path = os.path.join(yelp_dir, dataset + ".csv")
        if not fileio.exists(path):
            raise DataError(
                f"{path} is missing: {yelp_dir} is not the folder of {self.URL}; remove it "
                "from --tmp_dir so that the archive is extracted again."
            )
        with tf.io.gfile.GFile(path) as f:
            lines = f.readlines()
        for index, line in enumerate(lines):
            if len(line) < 2:
                raise TextLineError(f"{path}, line {index + 1}: no label (its 2nd character).")
            doc = line[5:-2].strip()
            yield (doc, line[1]) if include_label else doc

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        yelp_dir = _extracted(tmp_dir, self.URL, self._FOLDER)
        dataset = "train" if dataset_split == DatasetSplit.TRAIN else "test"
        docs = self.doc_generator(yelp_dir, dataset, include_label=True)
        for index, (doc, label) in enumerate(docs):
            if not label.isdigit():
                raise TextLineError(
                    f"{os.path.join(yelp_dir, dataset)}.csv, line {index + 1}: label "
                    f"{label!r} (the line's 2nd character) is not a digit."
                )
            yield {"inputs": doc, "label": int(label)}


@t2t_registry.register_problem
class SentimentYelpPolarity(_Yelp):
    """Yelp reviews, labels 1 (negative) and 2 (positive) as the csv has them."""

    URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_polarity_csv.tgz"
    _FOLDER = "yelp_review_polarity_csv"

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return ["1", "2"]


@t2t_registry.register_problem
class SentimentYelpFull(_Yelp):
    """Yelp reviews, 1 to 5 stars as the csv has them."""

    URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_full_csv.tgz"
    _FOLDER = "yelp_review_full_csv"

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return ["1", "2", "3", "4", "5"]


@t2t_registry.register_problem
class SentimentSSTBinary(GlueTask, Text2ClassProblem):
    """The Stanford Sentiment Treebank's binary task (GLUE's SST-2, T2T's ``sst_binary.py``):
    ``SST-2/train.tsv`` and ``dev.tsv``, a header, then ``sentence<TAB>label`` rows."""

    _SST2_URL = glue_url("SST-2.zip", "aabc5f6b-e466-44a2-b9b4-cf6337f84ac8")
    _VOCAB_SIZE = 2**14
    _LABELS = ("neg", "pos")

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, "SST-2", "SST-2.zip", self._SST2_URL)

    def example_generator(self, filename: str) -> Iterator[dict]:
        for row in rows(filename, skip_header=True):
            sentence, label = row.take(2)
            yield {"inputs": sentence, "label": row.integer(label)}


_HERE = __name__
SentimentIMDBCharacters = characters(SentimentIMDB, "SentimentIMDBCharacters", EN_CHR_SENT, _HERE)
SentimentSSTBinaryCharacters = characters(
    SentimentSSTBinary, "SentimentSSTBinaryCharacters", EN_CHR_SENT, _HERE
)
SentimentYelpPolarityCharacters = characters(
    SentimentYelpPolarity, "SentimentYelpPolarityCharacters", EN_CHR_SENT, _HERE
)
SentimentYelpFullCharacters = characters(
    SentimentYelpFull, "SentimentYelpFullCharacters", EN_CHR_SENT, _HERE
)

# T2T's module -> its classes provided here (t2t_modules.IMPLEMENTED names them).
T2T_MODULES = {
    module.rpartition(".")[2]: tuple(
        globals()[name] for name, where in classes.items() if where == __name__
    )
    for module, classes in t2t_modules.IMPLEMENTED.items()
    if __name__ in classes.values()
}
T2T_REGISTERED_PROBLEMS = tuple(cls for classes in T2T_MODULES.values() for cls in classes)
