"""Problems as public usr_dirs write them, each with a hook or quirk of T2T's."""

import os

from tensor2tensor.data_generators import problem, text_problems, translate
from tensor2tensor.utils import registry


@registry.register_problem
class TranslitCharsHooks(translate.TranslateProblem):
    """A transliteration TranslateProblem with a CHARACTER vocabulary: T2T's Text2TextProblem
    hparams give it a loss_multiplier of 2."""

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def source_data_files(self, dataset_split):
        # Each url's file name is in --tmp_dir, so T2T's maybe_download downloads nothing.
        if dataset_split == problem.DatasetSplit.TRAIN:
            return [["translit.src", ("translit.src", "translit.tgt")]]
        return [["translit_dev.src", ("translit_dev.src", "translit_dev.tgt")]]


@registry.register_problem
class TabLinesKeepNewlines(text_problems.Text2TextProblem):
    """Tab-separated lines read with readlines(): every sample keeps its '\\n', so the
    vocabulary has a '\\n' subtoken, which T2T's vocab file stores over two lines; a file a
    split, so the eval split is encoded with the vocabulary read back from that file, whose
    ids after the '\n' subtoken are one more (T2T reads its two lines as two subtokens)."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def max_subtoken_length(self):
        return 1  # single characters: the '\t' after '\n' in the vocabulary is used

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        name = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
        with open(os.path.join(tmp_dir, f"tablines.{name}.txt"), encoding="utf-8") as f:
            lines = f.readlines()
        for line in lines:
            source, target = line.split("\t")
            yield {"inputs": source + "\t" + target, "targets": target}


@registry.register_problem
class HparamsHookProblem(text_problems.Text2TextProblem):
    """An hparams() hook that reads the run's model hparams and sets T2T's fields."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, dataset_split
        return text_problems.text2text_txt_iterator(
            os.path.join(tmp_dir, "translit.src"), os.path.join(tmp_dir, "translit.tgt")
        )

    def hparams(self, defaults, model_hparams):
        super().hparams(defaults, model_hparams)
        p = defaults
        p.input_space_id = problem.SpaceID.EN_CHR
        small = model_hparams.hidden_size < 64
        p.target_space_id = problem.SpaceID.EN_TOK if small else problem.SpaceID.GENERIC
        if model_hparams.shared_embedding_and_softmax_weights:
            p.loss_multiplier = 0.5
        p.batch_size_multiplier = 2
        assert model_hparams.data_dir and os.path.isdir(model_hparams.data_dir)
