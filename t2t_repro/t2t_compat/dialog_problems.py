"""T2T 1.15's ``DialogAbstract`` (``data_generators/dialog_abstract.py``): the base of its
word-level chatbot problems (``dialog_corpora.py``): each utterance of a dialog the input, the
next one the target, a ``TokenTextEncoder`` vocabulary of the training words.

As T2T does, the corpus archive lives beside --data_dir, in ``<data_dir>/../raw_data`` (the
OpenSubtitles ones in ``raw_data_<year>``), and is extracted there; the pipeline goes on
from what it finds (T2T's ``data_pipeline_status``): the six text files
(``{train,dev,test}{Source,Target}.txt``) and the vocabulary ``vocab.chatbot.<size>`` in
--data_dir, else the extracted corpus, else the archive, else the archive fetched. Fetched
here: from --tmp_dir under the same folder (``<tmp_dir>/raw_data/<archive>``) when there, else
from T2T's URL (``generator_utils.maybe_download``; ``--offline``: one line naming the file).
"""

from __future__ import annotations

import os
import re
import tarfile
import zipfile
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro.data.text_files import extract_safely
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat.metrics import Metrics
from t2t_repro.t2t_compat.problem import DatasetSplit, SpaceID, T2TProblemError
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType

_FILES = ("trainSource", "trainTarget", "devSource", "devTarget", "testSource", "testTarget")


def read_raw(path: str):
    """A raw corpus file as T2T opens it (``open(path, errors='ignore')``: text, UTF-8,
    universal newlines, undecodable bytes dropped)."""
    return open(path, encoding="utf-8", errors="ignore")  # noqa: SIM115


class DialogAbstract(Text2TextProblem):
    """Abstract class for dialog problems (T2T's): a subclass sets the corpus paths and URL
    in ``preprocess_data`` and writes the six text files and the vocabulary in
    ``create_data``."""

    mode = {DatasetSplit.TRAIN: "train", DatasetSplit.EVAL: "dev", DatasetSplit.TEST: "test"}

    @property
    def vocab_type(self) -> str:
        return VocabType.TOKEN

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def vocab_file(self) -> str:
        return self.vocab_filename

    @property
    def vocab_filename(self) -> str:
        return "vocab.chatbot." + str(self.targeted_vocab_size)

    @property
    def oov_token(self) -> str:
        return "<unk>"

    @property
    def use_subword_tokenizer(self) -> bool:
        return False

    @property
    def input_space_id(self) -> int:
        return SpaceID.EN_TOK

    @property
    def target_space_id(self) -> int:
        return SpaceID.EN_TOK

    @property
    def targeted_vocab_size(self) -> int:
        return 2**14

    @property
    def targeted_dataset_size(self) -> int:
        """Utterance pairs to keep; 0: the whole corpus."""
        return 0

    @property
    def dataset_split(self) -> dict:
        return {"train": 80, "val": 10, "test": 10}

    @property
    def dataset_splits(self) -> list[dict]:
        return [{"split": split, "shards": 1} for split in self.mode]

    # T2T's settable paths: set by preprocess_data, read as self._<name>
    def _setter(name: str):  # noqa: N805  (a helper of the class body)
        def fset(self, value: str) -> None:
            setattr(self, "_" + name, value)

        return property(lambda self: "", fset)

    data_dir = _setter("data_dir")
    raw_data_dir = _setter("raw_data_dir")
    raw_data = _setter("raw_data")
    zipped_data = _setter("zipped_data")
    url = _setter("url")
    del _setter

    def preprocess_data(self, train_mode: str) -> None:
        raise NotImplementedError()

    def create_data(self, train_mode: str) -> None:
        pass

    def data_pipeline_status(self, train_mode: str) -> None:
        """T2T's: go on from the furthest step whose files are there."""
        done = [f"{train_mode}Source.txt", f"{train_mode}Target.txt", self.vocab_file]
        if not os.path.exists(self._raw_data_dir):
            os.makedirs(self._raw_data_dir)
        if all(os.path.isfile(os.path.join(self._data_dir, f)) for f in done):
            return
        if os.path.exists(self._raw_data):
            self.create_data(train_mode)
        elif os.path.exists(self._zipped_data):
            self.extract_data(train_mode)
        else:
            self.download_data(train_mode)

    def download_data(self, train_mode: str) -> None:
        """The archive into T2T's place: a copy of --tmp_dir's, else T2T's download."""
        name = os.path.basename(self._zipped_data)
        local = os.path.join(self._tmp_dir or "", os.path.basename(self._raw_data_dir), name)
        source = local if self._tmp_dir and os.path.isfile(local) else self._url
        generator_utils.maybe_download(self._raw_data_dir, name, source)
        self.extract_data(train_mode)

    def extract_data(self, train_mode: str) -> None:
        """T2T's: a ``gz`` name is read as a gzipped tar, a ``zip`` one as a zip, extracted
        into the raw data folder; then ``create_data``."""
        self._extract(self._zipped_data, self._raw_data_dir, tar=True)
        self.create_data(train_mode)

    def _extract(self, archive: str, into: str, tar: bool) -> None:
        if tar and archive.endswith("gz"):
            with tarfile.open(archive, "r:gz") as tgz:
                extract_safely(tgz, into)
        elif archive.endswith(("zip", "gz")):
            with zipfile.ZipFile(archive, "r") as zipped:
                zipped.extractall(into)
        else:
            raise T2TProblemError(f"{archive} is not a .zip or .gz file: it cannot be extracted.")

    def eval_metrics(self) -> list[str]:
        return [
            Metrics.ACC,
            Metrics.ACC_TOP5,
            Metrics.ACC_PER_SEQ,
            Metrics.NEG_LOG_PERPLEXITY,
            Metrics.APPROX_BLEU,
        ]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        """T2T's ``generate_data`` makes the split's text files (``preprocess_data``) right
        before encoding the split; so does this, then T2T's encoding."""
        self.data_dir = data_dir
        self._tmp_dir = tmp_dir
        self.preprocess_data(self.mode[dataset_split])
        return super().generate_encoded_samples(data_dir, tmp_dir, dataset_split)

    def generate_samples(self, data_dir, tmp_dir, data_split) -> Iterator[dict]:
        """T2T's: the split's source and target lines, in pairs, until either file ends."""
        self.data_dir = data_dir
        name = os.path.join(data_dir, self.mode[data_split])
        with tf.io.gfile.GFile(name + "Source.txt", "r") as sources:
            with tf.io.gfile.GFile(name + "Target.txt", "r") as targets:
                source, target = sources.readline(), targets.readline()
                while source and target:
                    yield {"inputs": source.strip(), "targets": target.strip()}
                    source, target = sources.readline(), targets.readline()

    def check_split_decodes(self) -> None:
        """A split's text is the data_dir's text files, which the decoder does not read."""
        raise T2TProblemError(
            f"{type(self).__name__} ({self.name}): its split text is written to --data_dir "
            "by datagen; decode its {dev,test}Source.txt with --decode_from_file."
        )

    def save_vocab(self, vocab) -> None:
        """T2T's: <pad>, <EOS>, the most common words, then <unk> (no final newline)."""
        with open(os.path.join(self._data_dir, self.vocab_file), "w") as f:
            f.write("<pad>\n<EOS>\n")
            for word, _ in vocab.most_common(self.targeted_vocab_size - 3):
                f.write(word + "\n")
            f.write("<unk>")

    def open_6_files(self) -> tuple:
        return tuple(open(os.path.join(self._data_dir, f + ".txt"), "w") for f in _FILES)  # noqa: SIM115

    def close_n_files(self, files) -> None:
        for f in files:
            f.close()

    def clean_line(self, line: str) -> str:
        """T2T's rules: keep ``[a-z .?!'0-9]``, space out . ? !, and split apostrophes."""
        line = re.sub("[^a-z .?!'0-9]", "", line)
        line = re.sub("[.]", " . ", line)
        line = re.sub("[?]", " ? ", line)
        line = re.sub("[!]", " ! ", line)
        line = re.sub("[ ]'[ ]", " ", line)
        line = re.sub(" '[a-z]", lambda m: m.group(0).replace("'", ""), line)
        line = re.sub("n't", " n't", line)
        return re.sub("[^ n]'[^ t]", lambda m: m.group(0).replace("'", " '"), line)


# T2T's names of dialog_abstract.py this project does not provide: one line when called.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.dialog_abstract")
