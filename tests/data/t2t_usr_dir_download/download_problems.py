"""Problems whose corpus is downloaded by T2T's own calls (see __init__.py)."""

import os

from tensor2tensor.data_generators import generator_utils, problem, text_problems, translate
from tensor2tensor.utils import registry

SPLITS = [
    {"split": problem.DatasetSplit.TRAIN, "shards": 2},
    {"split": problem.DatasetSplit.EVAL, "shards": 1},
]


def corpus_url(name):
    """Where the corpus is served (the caller's loopback server)."""
    return os.environ["TINY_CORPUS_URL"] + "/full/" + name


@registry.register_problem
class TinyDownloadTranslate(translate.TranslateProblem):
    """Train from a pair of files in a downloaded .tgz; dev from a downloaded tsv."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return SPLITS

    def source_data_files(self, dataset_split):
        if dataset_split == problem.DatasetSplit.TRAIN:
            files = ("tiny_parallel/train.en", "tiny_parallel/train.de")
            return [[corpus_url("tiny_parallel.tgz"), files]]
        return [[corpus_url("tiny_dev.tsv"), ("tsv", 0, 1, "tiny_dev.tsv")]]


@registry.register_problem
class TinyDriveText(text_problems.Text2TextProblem):
    """Pairs from a tsv kept on "Google Drive" (the caller's stand-in with its confirm page)."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return SPLITS

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        url = os.environ["TINY_CORPUS_URL"] + "/drive/uc?export=download&id=tiny_drive.tsv"
        path = generator_utils.maybe_download_from_drive(tmp_dir, "tiny_drive.tsv", url)
        return text_problems.text2text_txt_tab_iterator(path)
