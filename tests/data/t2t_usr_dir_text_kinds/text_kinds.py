"""The problems: their texts are in --tmp_dir (tests/data/t2t_usr_dir_text_kinds_reference/tmp)."""

import os

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry

LABELS = ["entailment", "neutral", "contradiction"]


def _splits(train_shards):
    return [
        {"split": problem.DatasetSplit.TRAIN, "shards": train_shards},
        {"split": problem.DatasetSplit.EVAL, "shards": 1},
    ]


@registry.register_problem
class PairedClaims(text_problems.TextConcat2ClassProblem):
    """A premise and a hypothesis, joined by CONCAT_TOKEN's id; the label a class name."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def max_samples_for_vocab(self):
        return 6  # past the 6th sample, only each premise reaches the vocabulary (T2T's loop)

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return _splits(2)

    @property
    def num_classes(self):
        return len(LABELS)

    def class_labels(self, data_dir):
        del data_dir
        return LABELS

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        premises = text_problems.text2class_txt_iterator(
            os.path.join(tmp_dir, "premises.txt"),
            os.path.join(tmp_dir, "labels.txt"),
            class_strs=LABELS,
        )
        hypotheses = text_problems.txt_line_iterator(os.path.join(tmp_dir, "hypotheses.txt"))
        for sample, hypothesis in zip(premises, hypotheses, strict=False):
            yield {"inputs": [sample["inputs"], hypothesis], "label": sample["label"]}


@registry.register_problem
class ChoppedStories(text_problems.ChoppedTextProblem):
    """Three training files over two shards, one dev file cut to max_dev_chars."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def sequence_length(self):
        return 8

    @property
    def max_dev_chars(self):
        return 150

    @property
    def max_chars_for_vocab(self):
        return 1500

    @property
    def dataset_splits(self):
        return _splits(2)

    def train_text_filepaths(self, tmp_dir):
        return [os.path.join(tmp_dir, f"story_{n}.txt") for n in ("a", "b", "c")]

    def dev_text_filepaths(self, tmp_dir):
        return [os.path.join(tmp_dir, "story_dev.txt")]
