"""A single-file T2T usr_dir named ``hparams``: a subword problem and an hparams set."""

import os

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_problem
class NamedHparamsWords(text_problems.Text2TextProblem):
    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        return text_problems.text2text_txt_tab_iterator(os.path.join(tmp_dir, "words.tsv"))


@registry.register_hparams
def transformer_named_hparams_tiny():
    hparams = transformer.transformer_tiny()
    hparams.num_hidden_layers = 1
    return hparams
