"""A T2T 1.x usr_dir whose problem subclasses T2T's plain ``Problem`` with encoders of its own
(no vocabulary file): written only against T2T 1.15's API, as such usr_dirs are."""

from tensor2tensor.data_generators import generator_utils, problem, text_encoder
from tensor2tensor.utils import registry

WORDS = ["ab", "bca", "cab", "abc", "ba", "cc", "acb", "bb"]


@registry.register_problem
class PlainUpcase(problem.Problem):
    """Upper-cases letters, byte by byte."""

    def feature_encoders(self, data_dir):
        encoder = text_encoder.ByteTextEncoder()
        return {"inputs": encoder, "targets": encoder}

    def _examples(self, words):
        encoder = text_encoder.ByteTextEncoder()
        for word in words:
            inputs = encoder.encode(word) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": encoder.encode(word.upper()) + [1]}

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        generator_utils.generate_dataset_and_shuffle(
            self._examples(WORDS * 8),
            self.training_filepaths(data_dir, 1, shuffled=False),
            self._examples(WORDS),
            self.dev_filepaths(data_dir, 1, shuffled=False),
        )
