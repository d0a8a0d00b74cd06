"""Problems as a T2T user writes them: a subword vocabulary over a local parallel corpus (a
Text2TextProblem and a TranslateProblem), and a character (byte) vocabulary."""

import os

from tensor2tensor.data_generators import problem, text_encoder, text_problems, translate
from tensor2tensor.utils import registry


@registry.register_problem
class TinyEnDeSubwords(text_problems.Text2TextProblem):
    """tiny.en -> tiny.de from --tmp_dir, one corpus dealt over train and eval by T2T."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def max_subtoken_length(self):
        return 6

    @property
    def additional_reserved_tokens(self):
        return ["<SEP>"]

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
        return text_problems.text2text_txt_iterator(
            os.path.join(tmp_dir, "tiny.en"), os.path.join(tmp_dir, "tiny.de")
        )


@registry.register_problem
class TinyUpcaseChars(text_problems.Text2TextProblem):
    """Tab-separated lines of chars.tsv, upcased; a character vocabulary; one file a split."""

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
            {"split": problem.DatasetSplit.TEST, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        name = {problem.DatasetSplit.TRAIN: "train"}.get(dataset_split, "heldout")
        path = os.path.join(tmp_dir, f"chars.{name}.tsv")
        for i, sample in enumerate(text_problems.text2text_txt_tab_iterator(path)):
            if dataset_split == problem.DatasetSplit.TEST and i % 2 == 0:
                continue
            if dataset_split == problem.DatasetSplit.EVAL and i % 2 == 1:
                continue
            sample["targets"] = sample["targets"].upper()
            yield sample

    def eval_metrics(self):
        return super().eval_metrics()[:4]


assert text_encoder.EOS_ID == 1 and text_encoder.PAD_ID == 0


@registry.register_problem
class TinyTranslateEnDe(translate.TranslateProblem):
    """T2T's TranslateProblem over parallel files already in --tmp_dir (nothing to download:
    each url's file name is there, so T2T's maybe_download finds it)."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def source_data_files(self, dataset_split):
        if dataset_split == problem.DatasetSplit.TRAIN:
            return [["tiny.en", ("tiny.en", "tiny.de")]]
        return [["tiny_dev.en", ("tiny_dev.en", "tiny_dev.de")]]
