"""Word-level translation as public usr_dirs write it: the word lists in ``--tmp_dir`` become
two ``TokenTextEncoder`` vocabulary files in ``--data_dir`` (an out-of-vocabulary word and an
empty line's token added), and the problem's own ``feature_encoders`` and
``generate_encoded_samples`` use one for the inputs and the other for the targets."""

import os

from tensor2tensor.data_generators import problem, text_encoder, text_problems, translate
from tensor2tensor.utils import registry


@registry.register_problem
class WordsEnToDe(translate.TranslateProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.TOKEN

    @property
    def oov_token(self):
        return "UNK"

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def _vocab(self, data_dir, name):
        return text_encoder.TokenTextEncoder(
            os.path.join(data_dir, name), replace_oov=self.oov_token
        )

    def feature_encoders(self, data_dir):
        return {
            "inputs": self._vocab(data_dir, "words.en.vocab"),
            "targets": self._vocab(data_dir, "words.de.vocab"),
        }

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for name in ("words.en.vocab", "words.de.vocab"):
            path = os.path.join(data_dir, name)
            if not os.path.exists(path):
                with open(os.path.join(tmp_dir, name), encoding="utf-8") as f:
                    words = f.read().split("\n")  # the file's last newline gives an empty token
                words.append(self.oov_token)
                text_encoder.TokenTextEncoder(None, vocab_list=words).store_to_file(path)
        tag = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
        return text_problems.text2text_txt_iterator(
            os.path.join(tmp_dir, f"words.{tag}.en"), os.path.join(tmp_dir, f"words.{tag}.de")
        )

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        samples = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoders = self.feature_encoders(data_dir)
        return text_problems.text2text_generate_encoded(
            samples, encoders["inputs"], encoders["targets"], has_inputs=self.has_inputs
        )
