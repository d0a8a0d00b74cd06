"""Problems of T2T's registry rules, as a T2T user writes them."""

import re

from tensor2tensor.data_generators import problem, text_encoder, text_problems, translate
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry

SPLITS = [
    {"split": problem.DatasetSplit.TRAIN, "shards": 2},
    {"split": problem.DatasetSplit.EVAL, "shards": 1},
]


@registry.register_problem
class TinyTmpdir(text_problems.Text2textTmpdir):
    """T2T's Text2textTmpdir (inputs/targets .train/.eval.txt in --tmp_dir), fewer shards."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return SPLITS


@registry.register_problem
class TinyTmpdirTokens(text_problems.Text2textTmpdirTokens):
    """T2T's Text2textTmpdirTokens (and vocab.txt in --tmp_dir), fewer shards."""

    @property
    def dataset_splits(self):
        return SPLITS


class WordListEncoder(text_encoder.TextEncoder):
    """A user's own encoder: lower-cased words and punctuation of a fixed list, one id each,
    an unknown word as ``<unk>``."""

    WORDS = (
        "<unk> . ! ? the a one my your this cat dog house garden car book tree child sees "
        "likes finds has die eine meine deine diese katze hund haus garten auto buch baum "
        "kind sieht mag findet hat"
    ).split()

    def __init__(self):
        super().__init__()
        self._ids = {w: i + self.num_reserved_ids for i, w in enumerate(self.WORDS)}

    def encode(self, s):
        words = re.findall(r"\w+|[^\w\s]", s.lower())
        return [self._ids.get(w, self._ids["<unk>"]) for w in words]

    def decode(self, ids, strip_extraneous=False):
        if strip_extraneous:
            ids = text_encoder.strip_ids(ids, list(range(self.num_reserved_ids)))
        return " ".join(self.decode_list(ids))

    def decode_list(self, ids):
        reserved = self.num_reserved_ids
        return [
            text_encoder.RESERVED_TOKENS[i] if i < reserved else self.WORDS[i - reserved]
            for i in ids
        ]

    @property
    def vocab_size(self):
        return len(self.WORDS) + self.num_reserved_ids


@registry.register_problem
class TinyOwnTextEncoder(text_problems.Text2textTmpdir):
    """The Text2textTmpdir files with the user's encoder (no vocab file)."""

    @property
    def dataset_splits(self):
        return SPLITS

    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        return WordListEncoder()


ZIP_URL = "https://example.org/corpora/tiny_corpus.zip"


@registry.register_problem
class TinyZipTranslate(translate.TranslateProblem):
    """Train from a pair of files in a .zip; dev from a tsv in it and a pair of .gz files."""

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return SPLITS

    def source_data_files(self, dataset_split):
        if dataset_split == problem.DatasetSplit.TRAIN:
            return [[ZIP_URL, ("tiny_zip/train.en", "tiny_zip/train.de")]]
        return [
            [ZIP_URL, ("tsv", 0, 1, "tiny_zip/dev*.tsv")],
            ["tiny_dev_gz", ("tiny_dev.en.gz", "tiny_dev.de.gz")],
        ]


@registry.register_hparams
def transformer_tiny_surface():
    hparams = transformer.transformer_base()
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 16
    hparams.filter_size = 32
    hparams.num_heads = 2
    hparams.batch_size = 256
    hparams.learning_rate_warmup_steps = 10
    return hparams
