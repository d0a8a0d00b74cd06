"""T2T 1.15's registered language-model problems, with T2T's names, vocabularies and datagen:
``languagemodel_ptb10k`` / ``languagemodel_ptb_characters`` (``data_generators/ptb.py``),
``languagemodel_lm1b32k`` / ``_lm1b8k`` / ``_lm1b_characters`` (``lm1b.py``) and
``languagemodel_wikitext103`` / ``_wikitext103_characters`` (``wikitext103.py``), each a
``Text2SelfProblem`` (the Transformer's decoder alone). ``languagemodel_lm1b32k_packed`` is here
too; LM1B's other packed ones are in ``packed_problems.py``.

Their corpora are read from --tmp_dir under T2T's file names, downloaded there from T2T's
addresses when missing (``generator_utils.maybe_download``; offline, one line names the file to
put there): ``simple-examples.tgz`` (PTB, Mikolov's),
``1-billion-word-language-modeling-benchmark-r13output.tar.gz`` and ``vocab-2016-09-10.txt.en``
(LM1B), ``wikitext-103-v1.zip`` / ``wikitext-103-raw-v1.zip``. One difference from T2T: an LM1B
tarball found in --tmp_dir is extracted when its folder is not there (T2T extracts it only right
after downloading it).

T2T's vocabularies are kept as they are, quirks included: PTB's ``vocab.lmptb.10000`` lists the
words by count without reserved tokens, so its two most frequent words get the ids of PAD and
EOS (``TokenTextEncoder`` reads a file as it is).

Also this project's ``languagemodel_multi30k_de`` / ``_en`` (not T2T's): a language model on one
side of Multi30k, a small real corpus for a 2-core CPU (README).
"""

from __future__ import annotations

import collections
import os
import zipfile

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.data.text_files import DataError, extract_all, extract_safely
from t2t_repro.t2t_compat import generator_utils, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_problems import Text2SelfProblem

EOS = text_encoder.EOS
PTB_URL = "http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz"
LM1B_URL = (
    "http://www.statmt.org/lm-benchmark/1-billion-word-language-modeling-benchmark-r13output.tar.gz"
)
LM1B_VOCAB_URL = "http://download.tensorflow.org/models/LM_LSTM_CNN/vocab-2016-09-10.txt"
LM1B_DIR = "1-billion-word-language-modeling-benchmark-r13output"
WIKITEXT_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
WIKITEXT_RAW_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-raw-v1.zip"


# -- PTB (ptb.py) -------------------------------------------------------------------------------
def _ptb_files(tmp_dir: str, vocab_type: str) -> list[str]:
    """T2T's ``_maybe_download_corpus``: the ptb*.txt members of simple-examples.tgz, extracted
    into tmp_dir (char ones for a CHARACTER vocabulary)."""
    path = generator_utils.maybe_download(tmp_dir, os.path.basename(PTB_URL), PTB_URL)
    import tarfile

    with tarfile.open(path, "r:gz") as tgz:
        members = [m for m in tgz.getmembers() if "ptb" in m.name and ".txt" in m.name]
        extract_safely(tgz, tmp_dir, members)
    chars = vocab_type == VocabType.CHARACTER
    return [m.name for m in members if ("char" in m.name) == chars]


def _ptb_vocab(vocab_path: str, train_file: str, vocab_size: int = 10000) -> None:
    """T2T's ``_build_vocab``: the words of the training text (a line's end read as EOS) by
    descending count, then alphabetically, the first ``vocab_size``, one a line."""
    if fileio.exists(vocab_path):
        return
    with tf.io.gfile.GFile(train_file) as f:
        words = f.read().replace("\n", f" {EOS} ").split()
    pairs = sorted(collections.Counter(words).items(), key=lambda x: (-x[1], x[0]))
    with atomic_open(vocab_path, "w") as f:
        f.write("\n".join(w for w, _ in pairs[:vocab_size]))


@t2t_registry.register_problem
class LanguagemodelPtb10k(Text2SelfProblem):
    """PTB (Mikolov's simple-examples), 10k words: T2T's ``ptb.py``."""

    @property
    def dataset_splits(self):
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_filename(self):
        return "vocab.lmptb.10000"

    @property
    def vocab_type(self):
        return VocabType.TOKEN

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        files = _ptb_files(tmp_dir, self.vocab_type)
        train_file = next((os.path.join(tmp_dir, f) for f in files if "train" in f), None)
        valid_file = next((os.path.join(tmp_dir, f) for f in files if "valid" in f), None)
        if not train_file or not valid_file:
            raise DataError(
                f"{os.path.basename(PTB_URL)} in --tmp_dir {tmp_dir} holds no ptb train and "
                "valid text files: it is not Mikolov's simple-examples archive."
            )
        if data_dir:
            _ptb_vocab(os.path.join(data_dir, self.vocab_filename), train_file)
        path = train_file if dataset_split == DatasetSplit.TRAIN else valid_file

        def samples():
            with tf.io.gfile.GFile(path) as f:
                for line in f:
                    yield {"targets": " ".join(line.replace("\n", f" {EOS} ").split())}

        return samples()


@t2t_registry.register_problem
class LanguagemodelPtbCharacters(LanguagemodelPtb10k):
    """PTB, character level."""

    @property
    def vocab_type(self):
        return VocabType.CHARACTER


# -- LM1B (lm1b.py) ----------------------------------------------------------------------------
def _lm1b_files(tmp_dir: str, split: str) -> list[str]:
    root = os.path.join(tmp_dir, LM1B_DIR)
    if split == DatasetSplit.TRAIN:
        name = "training-monolingual.tokenized.shuffled/news.en-{:05d}-of-00100"
        return [os.path.join(root, name.format(i)) for i in range(1, 100)]
    return [
        os.path.join(root, "heldout-monolingual.tokenized.shuffled/news.en.heldout-00000-of-00050")
    ]


@t2t_registry.register_problem
class LanguagemodelLm1b32k(Text2SelfProblem):
    """The 1B words corpus, a 32k subword vocabulary: T2T's ``lm1b.py`` (words outside the
    benchmark's vocabulary replaced by ``UNK``, as in published results)."""

    @property
    def approx_vocab_size(self):
        return 2**15

    @property
    def max_samples_for_vocab(self):
        return 63000

    def is_generate_per_split(self):  # a method in T2T too: only its truth is read
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        if not fileio.exists(os.path.join(tmp_dir, LM1B_DIR)):
            archive = os.path.basename(LM1B_URL)
            extract_all(generator_utils.maybe_download(tmp_dir, archive, LM1B_URL), tmp_dir)
        vocab_name = os.path.basename(LM1B_VOCAB_URL + ".en")
        vocab_path = generator_utils.maybe_download(tmp_dir, vocab_name, LM1B_VOCAB_URL)
        with tf.io.gfile.GFile(vocab_path) as f:
            original = {line.strip() for line in f}
        for path in _lm1b_files(tmp_dir, dataset_split):
            with tf.io.gfile.GFile(path) as f:
                for line in f:
                    words = line.split()
                    yield {"targets": " ".join(w if w in original else "UNK" for w in words)}


@t2t_registry.register_problem
class LanguagemodelLm1b8k(LanguagemodelLm1b32k):
    @property
    def approx_vocab_size(self):
        return 2**13


@t2t_registry.register_problem
class LanguagemodelLm1bCharacters(LanguagemodelLm1b32k):
    @property
    def vocab_type(self):
        return VocabType.CHARACTER


@t2t_registry.register_problem
class LanguagemodelLm1b32kPacked(LanguagemodelLm1b32k):
    """T2T's packed variant (``packed_length``), ``languagemodel_lm1b32k``'s vocabulary file."""

    @property
    def packed_length(self):
        return 256

    @property
    def vocab_filename(self):
        return LanguagemodelLm1b32k().vocab_filename


# -- WikiText-103 (wikitext103.py) -------------------------------------------------------------
def _wikitext_files(tmp_dir: str, vocab_type: str) -> tuple[str, str, str]:
    """T2T's ``_maybe_download_corpus``: the zip (raw for characters) extracted into tmp_dir;
    its train, valid and test files."""
    chars = vocab_type == VocabType.CHARACTER
    url = WIKITEXT_RAW_URL if chars else WIKITEXT_URL
    path = generator_utils.maybe_download(tmp_dir, os.path.basename(url), url)
    with zipfile.ZipFile(path) as archive:
        archive.extractall(tmp_dir)
    found = {}
    for name in tf.io.gfile.glob(
        os.path.join(tmp_dir, "wikitext-103-raw" if chars else "wikitext-103", "*")
    ):
        for kind in ("train", "valid", "test"):
            if kind in os.path.basename(name):
                found[kind] = name
                break
    missing = [k for k in ("train", "valid", "test") if k not in found]
    if missing:
        raise DataError(
            f"{path} holds no {'/'.join(missing)} file: it is not the WikiText-103 archive."
        )
    return found["train"], found["valid"], found["test"]


@t2t_registry.register_problem
class LanguagemodelWikitext103(Text2SelfProblem):
    """WikiText-103, words: T2T's ``wikitext103.py`` (its vocabulary every training word)."""

    @property
    def dataset_splits(self):
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 1},
        ]

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_type(self):
        return VocabType.TOKEN

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        train, valid, test = _wikitext_files(tmp_dir, self.vocab_type)
        paths = {DatasetSplit.TRAIN: train, DatasetSplit.EVAL: valid, DatasetSplit.TEST: test}
        vocab_path = data_dir and os.path.join(data_dir, self.vocab_filename)
        if (  # wikitext103.py: a word vocabulary for the TOKEN problem only
            dataset_split == DatasetSplit.TRAIN
            and self.vocab_type == VocabType.TOKEN
            and vocab_path
            and not fileio.exists(vocab_path)
        ):
            with tf.io.gfile.GFile(train) as f:
                counts = collections.Counter(f.read().split())
            words = [w for w, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]
            text_encoder.TokenTextEncoder(None, vocab_list=words).store_to_file(vocab_path)

        def samples():
            with tf.io.gfile.GFile(paths[dataset_split]) as f:
                for line in f:
                    line = " ".join(line.split())
                    if line:
                        yield {"targets": line}

        return samples()


@t2t_registry.register_problem
class LanguagemodelWikitext103L4k(LanguagemodelWikitext103):
    """T2T's WikiText-103 in examples of up to ``sequence_length`` words: the lines joined
    while they fit (``wikitext103.py``; as T2T's, a line that does not fit starts the next
    example, and the words left after the last line are not written)."""

    @property
    def sequence_length(self) -> int:
        return 4096

    def max_length(self, model_hparams) -> int:
        return model_hparams.split_to_length or self.sequence_length

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        lines = super().generate_samples(data_dir, tmp_dir, dataset_split)

        def examples():
            words: list[str] = []
            for sample in lines:
                line_words = sample["targets"].split()
                if len(words) + len(line_words) < self.sequence_length:
                    words.extend(line_words)
                else:
                    yield {"targets": " ".join(words)}
                    words = line_words

        return examples()


@t2t_registry.register_problem
class LanguagemodelWikitext103L16k(LanguagemodelWikitext103L4k):
    @property
    def sequence_length(self) -> int:
        return 16384


@t2t_registry.register_problem
class LanguagemodelWikitext103Characters(LanguagemodelWikitext103):
    @property
    def vocab_type(self):
        return VocabType.CHARACTER


T2T_LM_PROBLEMS = (
    LanguagemodelPtb10k,
    LanguagemodelPtbCharacters,
    LanguagemodelLm1b32k,
    LanguagemodelLm1b8k,
    LanguagemodelLm1bCharacters,
    LanguagemodelLm1b32kPacked,
    LanguagemodelWikitext103,
    LanguagemodelWikitext103Characters,
)


# -- Multi30k captions (this project's, not T2T's) ---------------------------------------------
class LanguagemodelMulti30kDe(Text2SelfProblem):
    """This project's language model on Multi30k's German captions (one a line; train 29,000,
    dev ``val`` 1,014, test ``test_2016_flickr`` 1,000), read as ``translate_ende_multi30k``
    reads them from --tmp_dir (``problems/translate_multi30k.py``); an 8k subword vocabulary."""

    side = "de"

    @property
    def approx_vocab_size(self):
        return 2**13

    @property
    def dataset_splits(self):
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 1},
        ]

    @property
    def is_generate_per_split(self):
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        from t2t_repro.builtin.problems.translate_multi30k import TranslateEndeMulti30k
        from t2t_repro.data.text_files import ReadStats

        del data_dir
        split = {DatasetSplit.TRAIN: "train", DatasetSplit.EVAL: "dev"}.get(dataset_split, "test")
        stats = ReadStats()
        for source in TranslateEndeMulti30k().split_sources(tmp_dir, split):
            for english, german in source.pairs(stats):
                text = german if self.side == "de" else english
                if text:
                    yield {"targets": text}


class LanguagemodelMulti30kEn(LanguagemodelMulti30kDe):
    """The same on Multi30k's English captions."""

    side = "en"


for _cls in (LanguagemodelMulti30kDe, LanguagemodelMulti30kEn):
    t2t_registry.register_problem(_cls)
