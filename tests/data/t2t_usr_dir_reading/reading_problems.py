"""Two character problems on the same pairs, each with a reading hook of T2T's Problem."""

import tensorflow as tf
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry

WORDS = ["cat", "dog", "sun", "tree", "book", "red", "blue", "small"]
TARGET_LIMIT = 4  # TruncatedTargets keeps this many target ids in training and evaluation


def pairs():
    """Forty pairs: a few words, and the same words reversed letter by letter."""
    for i in range(40):
        words = [WORDS[(i * 3 + k) % len(WORDS)] for k in range(1 + i % 3)]
        yield " ".join(words), " ".join(w[::-1] for w in words)


class _Chars(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

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
        for i, (source, target) in enumerate(pairs()):
            yield {"inputs": source, "targets": target, "pair_id": [i]}


@registry.register_problem
class ReadingSpecWithId(_Chars):
    """Reads the extra int64 field its samples carry, as a public usr_dir does."""

    def example_reading_spec(self):
        data_fields, data_items_to_decoders = super().example_reading_spec()
        data_fields["pair_id"] = tf.VarLenFeature(tf.int64)
        return data_fields, data_items_to_decoders


@registry.register_problem
class TruncatedTargets(_Chars):
    """Keeps the first TARGET_LIMIT target ids when training and evaluating."""

    def preprocess_example(self, example, mode, hparams):
        example = super().preprocess_example(example, mode, hparams)
        if mode != tf.estimator.ModeKeys.PREDICT:
            example["targets"] = example["targets"][:TARGET_LIMIT]
        return example


@registry.register_hparams
def transformer_tiny_reading():
    hparams = transformer.transformer_base()
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 32
    hparams.filter_size = 64
    hparams.num_heads = 2
    hparams.batch_size = 512
    return hparams
