"""A single-file T2T usr_dir named ``problems``: a character problem of tab-separated lines."""

import os

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class NamedFileChars(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        return text_problems.text2text_txt_tab_iterator(os.path.join(tmp_dir, "chars.tsv"))
