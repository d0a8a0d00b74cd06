"""Two usr_dir problems with T2T 1.15's ``packed_length`` (written only against T2T's API; their
texts made here, from a fixed seed): a ``Text2TextProblem`` of word pairs packed to 24 ids
with 2 ids of spacing (one pair longer than that), and a character ``Text2SelfProblem`` packed
to 32 ids, whose longer lines T2T chops. T2T 1.15.7's datagen of both is the reference
(tools/t2t_reference/make_t2t_packed_reference.py)."""

import random

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry

WORDS = "red green blue cat dog bird sees likes near far small big old new the a".split()


def _sentences(seed, count):
    rng = random.Random(seed)  # not the global random: T2T's shuffles draw from that
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7))) for _ in range(count)]


def _splits(train_shards):
    return [
        {"split": problem.DatasetSplit.TRAIN, "shards": train_shards},
        {"split": problem.DatasetSplit.EVAL, "shards": 1},
    ]


@registry.register_problem
class PackedPairs(text_problems.Text2TextProblem):
    """Each sentence to its words reversed; one sentence of 30 words (longer than 24 ids)."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return _splits(2)

    @property
    def packed_length(self):
        return 24

    @property
    def packed_spacing(self):
        return 2

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        sentences = _sentences(7, 60)
        sentences[17] = " ".join(WORDS * 2)[:150]
        for text in sentences:
            yield {"inputs": text, "targets": " ".join(reversed(text.split()))}


@registry.register_problem
class PackedLines(text_problems.Text2SelfProblem):
    """Bytes of each line; some lines of 2-3 sentences, longer than 32 ids."""

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return _splits(3)

    @property
    def packed_length(self):
        return 32

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        train = dataset_split == problem.DatasetSplit.TRAIN
        lines = _sentences(11 if train else 12, 40 if train else 8)
        for i, line in enumerate(lines):
            yield {"targets": line + (". " + lines[i - 1] if i % 5 == 0 else "")}
