"""Text classification as public usr_dirs write it: a CHARACTER ``Text2ClassProblem`` reading
``label<TAB>text`` lines of a file a split in --tmp_dir, with its own class labels."""

import os

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class LineSentiment(text_problems.Text2ClassProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

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
        return 2

    def class_labels(self, data_dir):
        del data_dir
        return ["negative", "positive"]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        tag = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
        with open(os.path.join(tmp_dir, f"{tag}.tsv"), encoding="utf-8") as f:
            for line in f:
                label, text = line.rstrip("\n").split("\t")
                yield {"inputs": text, "label": int(label)}
