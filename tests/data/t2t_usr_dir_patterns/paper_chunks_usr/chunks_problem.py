"""A language model as inzva/fake-academic-paper-generation's usr_dir shapes one (written for the
tests against T2T's API only, none of its code): a CHARACTER ``Text2SelfProblem`` whose samples
are fixed-length character chunks of one text file (``maybe_download`` finds it already in
--tmp_dir, so nothing is downloaded), encoded by its own ``generate_encoded_samples`` without
EOS (the chunks run on), one stream dealt over 100 train shards and 1 dev shard, an
``hparams()`` hook that sets ``loss_multiplier``, and a package ``__init__`` that imports its
module by the package's own name."""

import numpy as np
from tensor2tensor.data_generators import generator_utils, problem, text_problems
from tensor2tensor.utils import mlperf_log, registry

__all__ = ["PaperChunksLm"]


@registry.register_problem
class PaperChunksLm(text_problems.Text2SelfProblem):
    @property
    def corpus_url(self):
        return "https://example.invalid/paper_text.txt"  # never fetched: the file is there

    @property
    def is_generate_per_split(self):
        return False

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def chunk_length(self):
        return 48

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 100},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        path = generator_utils.maybe_download(tmp_dir, "paper_text.txt", self.corpus_url)
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        self.num_chunks = int(np.ceil(len(text) / self.chunk_length))
        for i in range(self.num_chunks):
            yield {"targets": text[i * self.chunk_length : (i + 1) * self.chunk_length]}

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        if dataset_split == problem.DatasetSplit.TRAIN:
            mlperf_log.transformer_print(key=mlperf_log.PREPROC_TOKENIZE_TRAINING)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            yield {"targets": encoder.encode(sample["targets"])}  # no EOS appended

    def hparams(self, defaults, model_hparams):
        super().hparams(defaults, model_hparams)
        defaults.loss_multiplier = 1.0
