"""Transliteration as public usr_dirs write it: a CHARACTER ``TranslateProblem`` with a class
attribute ``name``, which T2T's registry replaces by the registered name."""

import os

from tensor2tensor.data_generators import problem, text_problems, translate
from tensor2tensor.utils import registry


@registry.register_problem
class TranslitAbToXy(translate.TranslateProblem):
    name = "ab_to_xy"

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def approx_vocab_size(self):
        return 100  # not read for a character vocabulary

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        tag = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
        return text_problems.text2text_txt_iterator(
            os.path.join(tmp_dir, f"ab.{tag}.txt"), os.path.join(tmp_dir, f"xy.{tag}.txt")
        )
