"""Problems over corpora whose lines hold carriage returns ('\\r' inside a line, '\\r\\n' ends)."""

import os

from tensor2tensor.data_generators import problem, text_problems, translate
from tensor2tensor.utils import registry


@registry.register_problem
class CrLinesSubwords(text_problems.Text2TextProblem):
    """Parallel text files read with T2T's iterator: a subword vocabulary of their lines."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        split = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
        return text_problems.text2text_txt_iterator(
            os.path.join(tmp_dir, f"cr_{split}.en"), os.path.join(tmp_dir, f"cr_{split}.de")
        )


@registry.register_problem
class CrTranslate(translate.TranslateProblem):
    """compile_data of plain files (train, also the vocabulary's sample) and of a tsv (dev)."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def source_data_files(self, dataset_split):
        # Each url's file name is in --tmp_dir, so T2T's maybe_download downloads nothing.
        if dataset_split == problem.DatasetSplit.TRAIN:
            return [["cr_train.en", ("cr_train.en", "cr_train.de")]]
        return [["cr_dev.tsv", ("tsv", 0, 1, "cr_dev.tsv")]]
