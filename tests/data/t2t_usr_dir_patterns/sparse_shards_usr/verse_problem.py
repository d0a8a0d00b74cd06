"""Next-line prediction as public usr_dirs write it: a cwd-relative text file of blocks
separated by blank lines, each pair two consecutive lines of a block, one stream that T2T deals
over 9 train and 3 dev shards (fewer pairs than shards: some shards stay empty), and an hparams
set of the user's own."""

from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_problem
class NextVerseLine(text_problems.Text2TextProblem):
    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 9},
            {"split": problem.DatasetSplit.EVAL, "shards": 3},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, tmp_dir, dataset_split
        with open("verses/lines.txt", encoding="utf-8") as lines:
            previous = ""
            for line in lines:
                line = line.strip()
                if previous and line:
                    yield {"inputs": previous, "targets": line}
                previous = line


@registry.register_hparams
def transformer_verse_usr():
    hparams = transformer.transformer_base()
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 16
    hparams.filter_size = 32
    hparams.num_heads = 2
    hparams.layer_prepostprocess_dropout = 0.3
    return hparams
