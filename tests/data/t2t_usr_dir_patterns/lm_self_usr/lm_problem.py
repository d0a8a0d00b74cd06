"""A language model as public usr_dirs write one: a CHARACTER ``Text2SelfProblem`` (targets
only) over the lines of a file in --tmp_dir, one stream dealt over train and dev shards, with
the MLPerf logging call that T2T's own ``generate_encoded_samples`` makes (a no-op without
hparams)."""

import os

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import mlperf_log, registry


@registry.register_problem
class CharLinesLm(text_problems.Text2SelfProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 3},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        mlperf_log.transformer_print(key=mlperf_log.PREPROC_TOKENIZE_TRAINING)
        with open(os.path.join(tmp_dir, "lines.txt"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield {"targets": line.strip()}
