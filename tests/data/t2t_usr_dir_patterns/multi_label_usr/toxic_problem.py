"""A Kaggle toxic-comment problem, written for the tests against T2T 1.15's API only and shaped
like the public Jigsaw usr_dir's (#59): the competition's zip in --tmp_dir (fetched with
maybe_download_from_drive when absent) holding train.csv (id, text, six 0/1 flags), test.csv and
test_labels.csv; a comment's labels are the ids (1-6) of its set flags, or [0] ("OK") when none
is set; a subword vocabulary; train and dev generated per split."""

import csv
import io
import zipfile

from tensor2tensor.data_generators import generator_utils, problem
from tensor2tensor.utils import registry

from .label_lists import LabelListProblem

FLAGS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def _rows(archive, name):
    with archive.open(name) as f:
        return list(csv.reader(io.TextIOWrapper(f, encoding="utf-8")))[1:]


def _labels(flags):
    return [i + 1 for i, flag in enumerate(flags) if flag == "1"] or [0]


@registry.register_problem
class ToxicLines(LabelListProblem):
    URL = "https://drive.google.com/uc?export=download&id=not-fetched-in-tests"

    @property
    def approx_vocab_size(self):
        return 2**8

    @property
    def max_subtoken_length(self):
        return 100

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def num_classes(self):
        return 7

    def class_labels(self, data_dir):
        return ["OK"] + FLAGS

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        path = generator_utils.maybe_download_from_drive(tmp_dir, "toxic.zip", self.URL)
        with zipfile.ZipFile(path) as archive:
            if dataset_split == problem.DatasetSplit.TRAIN:
                pairs = [(r[1], _labels(r[2:])) for r in _rows(archive, "train.csv")]
            else:
                flags = {r[0]: r[1:] for r in _rows(archive, "test_labels.csv")}
                pairs = [(r[1], _labels(flags[r[0]])) for r in _rows(archive, "test.csv")]
        for text, labels in pairs:
            yield {"inputs": text, "labels": labels}
