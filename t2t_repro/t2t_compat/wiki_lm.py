"""T2T 1.15's untokenized-Wikipedia language models (``data_generators/wiki_lm.py``) under
T2T's names: ``languagemodel_en_wiki32k`` / ``_en_wiki64k`` / ``_en_wiki64k_shorter``,
``_de_wiki32k`` / ``_de_wiki64k``, ``_fr_wiki32k`` / ``_fr_wiki64k``, ``_ro_wiki32k`` /
``_ro_wiki64k`` and ``_de_en_fr_ro_wiki64k``, each a ``Text2SelfProblem`` with a subword
vocabulary. The packed ``_de_en_fr_ro_wiki64k_fitb_packed1k`` is refused in one line.

Their corpora are T2T's ``<lang>wiki_{train,eval,test}.txt.gz`` files, read from --tmp_dir or
downloaded there from T2T's Google Drive ids (``maybe_download_from_drive``; offline, one line
names the file to put there), gunzipped beside them when the ``.txt`` is not there. Each file's
lines are joined into examples of fewer than ``combine_characters_threshold`` characters
(T2T's ``concat_generator``), several files dealt one example each in turn
(``mix_generators``); the vocabulary is built from the first ``max_samples_for_vocab`` train
examples, as T2T does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text_problems import Text2SelfProblem

_DRIVE_URL = "https://drive.google.com/uc?export=download&id="

# wiki_lm.py's file names and Google Drive ids, per language and split.
_EN_TRAIN_NAME_ID = ("enwiki_train.txt.gz", "1-l02fI15ieMIZk8EnXhzhsvuEYRoznZ8")
_EN_EVAL_NAME_ID = ("enwiki_eval.txt.gz", "1odhDxWKtAPKXwxRw1KCrmlrVewxdXYq7")
_EN_TEST_NAME_ID = ("enwiki_test.txt.gz", "1i1Bg6XqvdRl1LuOiIWbg7ww8Y02Ip5VK")
_DE_TRAIN_NAME_ID = ("dewiki_train.txt.gz", "1FzEwoPonw9xlwX34vLPFInUF8F4X5yJy")
_DE_EVAL_NAME_ID = ("dewiki_eval.txt.gz", "1EKwRRPHyWny0RJ-aqSGMcNfjAlzFl51B")
_DE_TEST_NAME_ID = ("dewiki_test.txt.gz", "1Kr13Y7y_OD3JtUM9riXpFQP9UiHDkcFY")
_FR_TRAIN_NAME_ID = ("frwiki_train.txt.gz", "1etUIEZxMQKORwLGkssE5wlfCxxkeo8WV")
_FR_EVAL_NAME_ID = ("frwiki_eval.txt.gz", "13qrR5ZnHRgIMdcURVpixKL9gTO23GcPc")
_FR_TEST_NAME_ID = ("frwiki_test.txt.gz", "1mQpHRkAV9KXt68de69RwR8dkDi8EEusV")
_RO_TRAIN_NAME_ID = ("rowiki_train.txt.gz", "1wUJTEAlQeDcAwFnBxa8PzE-DCiXSU_W7")
_RO_EVAL_NAME_ID = ("rowiki_eval.txt.gz", "1uIPy2ZgkyArPy_gnsILENjgv4QQmSKtx")
_RO_TEST_NAME_ID = ("rowiki_test.txt.gz", "1kphjN4jXTbw8HyRYKaRE2zY4D7Fr-p7-")


def concat_generator(filename: str, up_threshold: int, low_threshold: int = 10) -> Iterator[dict]:
    """T2T's ``concat_generator``: the file's stripped lines joined by spaces into examples
    shorter than ``up_threshold`` characters; a join longer than ``low_threshold`` only (to
    keep noise out), and the text left at the file's end is dropped, as in T2T."""
    text = ""
    with tf.io.gfile.GFile(filename, "r") as f:
        for raw in f:
            line = raw.strip()
            if len(text) + len(line) + 1 >= up_threshold:
                done, text = text, ""
                if low_threshold < len(done) < up_threshold:
                    yield {"targets": done}
            text = f"{text} {line}" if text else line


def mix_generators(generator_list: list[Iterator]) -> Iterator:
    """T2T's ``mix_generators``: one item of each generator in turn, skipping exhausted
    ones, until a whole round (plus one) finds them all exhausted."""
    count = len(generator_list)
    index = exhausted_in_a_row = 0
    while exhausted_in_a_row <= count:
        try:
            item = next(generator_list[index % count])
        except StopIteration:
            exhausted_in_a_row += 1
        else:
            exhausted_in_a_row = 0
            yield item
        index += 1


@t2t_registry.register_problem
class LanguagemodelEnWiki32k(Text2SelfProblem):
    """English Wikipedia, untokenized, a 32k subword vocabulary (T2T's)."""

    train_names_ids = [_EN_TRAIN_NAME_ID]
    eval_names_ids = [_EN_EVAL_NAME_ID]
    test_names_ids = [_EN_TEST_NAME_ID]

    @property
    def approx_vocab_size(self) -> int:
        return 32000

    @property
    def max_samples_for_vocab(self) -> int:
        return 128000

    @property
    def combine_characters_threshold(self) -> int:
        """Examples join lines up to this many characters (T2T: ~512 tokens)."""
        return 512 * 8

    @property
    def is_generate_per_split(self) -> bool:
        # wiki_lm.py defines it as a plain method, which T2T's datagen reads as true.
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 100},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 1},
        ]

    def _names_ids(self, dataset_split: str) -> list[tuple[str, str]]:
        if dataset_split == DatasetSplit.TRAIN:
            return self.train_names_ids
        if dataset_split == DatasetSplit.TEST:
            return self.test_names_ids
        return self.eval_names_ids  # any other split reads eval's files, as in T2T

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """T2T's: each file downloaded (or found) and gunzipped in tmp_dir, then read
        ``concat_generator`` by ``concat_generator``, mixed."""
        generators = []
        for name, drive_id in self._names_ids(dataset_split):
            gz_path = generator_utils.maybe_download_from_drive(
                tmp_dir, name, _DRIVE_URL + drive_id
            )
            text_path = os.path.join(tmp_dir, name[:-3])
            if not fileio.exists(text_path):
                generator_utils.gunzip_file(gz_path, text_path)
            generators.append(concat_generator(text_path, self.combine_characters_threshold))
        return mix_generators(generators)


@t2t_registry.register_problem
class LanguagemodelEnWiki64k(LanguagemodelEnWiki32k):
    """As languagemodel_en_wiki32k, a 64k vocabulary."""

    @property
    def approx_vocab_size(self) -> int:
        return 64000


@t2t_registry.register_problem
class LanguagemodelEnWiki64kShorter(LanguagemodelEnWiki64k):
    """Shorter examples (384*8 characters), languagemodel_en_wiki64k's vocabulary file."""

    @property
    def combine_characters_threshold(self) -> int:
        return 384 * 8

    @property
    def use_vocab_from_other_problem(self) -> LanguagemodelEnWiki64k:
        return LanguagemodelEnWiki64k()


@t2t_registry.register_problem
class LanguagemodelDeWiki32k(LanguagemodelEnWiki32k):
    """German Wikipedia, 32k."""

    train_names_ids = [_DE_TRAIN_NAME_ID]
    eval_names_ids = [_DE_EVAL_NAME_ID]
    test_names_ids = [_DE_TEST_NAME_ID]


@t2t_registry.register_problem
class LanguagemodelDeWiki64k(LanguagemodelDeWiki32k):
    """German Wikipedia, 64k."""

    @property
    def approx_vocab_size(self) -> int:
        return 64000


@t2t_registry.register_problem
class LanguagemodelFrWiki32k(LanguagemodelEnWiki32k):
    """French Wikipedia, 32k."""

    train_names_ids = [_FR_TRAIN_NAME_ID]
    eval_names_ids = [_FR_EVAL_NAME_ID]
    test_names_ids = [_FR_TEST_NAME_ID]


@t2t_registry.register_problem
class LanguagemodelFrWiki64k(LanguagemodelFrWiki32k):
    """French Wikipedia, 64k."""

    @property
    def approx_vocab_size(self) -> int:
        return 64000


@t2t_registry.register_problem
class LanguagemodelRoWiki32k(LanguagemodelEnWiki32k):
    """Romanian Wikipedia, 32k."""

    train_names_ids = [_RO_TRAIN_NAME_ID]
    eval_names_ids = [_RO_EVAL_NAME_ID]
    test_names_ids = [_RO_TEST_NAME_ID]


@t2t_registry.register_problem
class LanguagemodelRoWiki64k(LanguagemodelRoWiki32k):
    """Romanian Wikipedia, 64k."""

    @property
    def approx_vocab_size(self) -> int:
        return 64000


@t2t_registry.register_problem
class LanguagemodelDeEnFrRoWiki64k(LanguagemodelEnWiki32k):
    """The four Wikipedias mixed (de, fr, en, ro: T2T's order), one 64k vocabulary; the
    vocabulary T2T's multilingual translation, summarization and NLI problems share."""

    train_names_ids = [_DE_TRAIN_NAME_ID, _FR_TRAIN_NAME_ID, _EN_TRAIN_NAME_ID, _RO_TRAIN_NAME_ID]
    eval_names_ids = [_DE_EVAL_NAME_ID, _FR_EVAL_NAME_ID, _EN_EVAL_NAME_ID, _RO_EVAL_NAME_ID]
    test_names_ids = [_DE_TEST_NAME_ID, _FR_TEST_NAME_ID, _EN_TEST_NAME_ID, _RO_TEST_NAME_ID]

    @property
    def approx_vocab_size(self) -> int:
        return 64000

    @property
    def max_samples_for_vocab(self) -> int:
        return 256000  # T2T: samples interleave, more of them to cover four languages


T2T_REGISTERED_PROBLEMS = (
    LanguagemodelEnWiki32k,
    LanguagemodelEnWiki64k,
    LanguagemodelEnWiki64kShorter,
    LanguagemodelDeWiki32k,
    LanguagemodelDeWiki64k,
    LanguagemodelFrWiki32k,
    LanguagemodelFrWiki64k,
    LanguagemodelRoWiki32k,
    LanguagemodelRoWiki64k,
    LanguagemodelDeEnFrRoWiki64k,
)

# T2T's names of wiki_lm.py this project does not provide (the packed fitb problem): one line.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.wiki_lm")
