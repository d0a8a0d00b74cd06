"""``tensor2tensor.data_generators.translate_enzh``: T2T 1.15.7's ``translate_enzh_wmt32k``
(``TranslateEnzhWmt32k``) and ``translate_enzh_wmt8k`` (``TranslateEnzhWmt8k``) on the usr_dir
``TranslateProblem`` (``translate.py``), so their datagen writes T2T's files.

Unlike T2T's other translation problems they have separate source and target subword
vocabularies, ``vocab.<problem>.<size>.subwords.en`` and ``.zh`` in --data_dir, each built from
its side of the train corpora (``get_or_generate_vocab``, a 1e8-byte budget a file), and their
own compiled files in --tmp_dir, ``wmt_enzh_<size>k_tok_<train|dev>.lang1/.lang2`` (T2T's name
puts a "k" after the full size: ``wmt_enzh_32768k_tok_train``). Train reads News Commentary v13
(``training-parallel-nc-v13.tgz``); the 32k problem adds the CWMT corpora (``cwmt.tgz``) and the
UN corpus (``UNv1.0.en-zh.tar.gz``) when those archives are in --tmp_dir (both need a
registration, so neither is downloaded). Dev is WMT18's ``newsdev2017`` ``.sgm`` pair
(``dev.tgz``). The 8k problem has 10 train shards, the 32k one 100; both one dev shard.

As in T2T, ``get_training_dataset`` extends the module's News Commentary list in place: in a
process that ran the 32k datagen with CWMT or UN there, the 8k problem then reads them too
(``t2t-datagen --problem='translate_enzh*'``), as T2T's does. The trainer and decoder read the
two encoders from ``feature_encoders``; a split decoded here reads T2T's compiled files of it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import generator_utils, refusals, rev_variant
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, split_file_name
from t2t_repro.t2t_compat.text_encoder import EOS_ID, SubwordTextEncoder
from t2t_repro.t2t_compat.text_iterators import (
    text2text_generate_encoded,
    text2text_txt_iterator,
)
from t2t_repro.t2t_compat.translate import TranslateProblem, compile_data

EOS = EOS_ID

# T2T's corpora (translate_enzh.py): [url, [English file, Chinese file]] entries.
_STAT_MT_URL = "http://data.statmt.org/wmt18/translation-task/"
_NC_TRAIN_DATASETS = [
    [
        _STAT_MT_URL + "training-parallel-nc-v13.tgz",
        [
            "training-parallel-nc-v13/news-commentary-v13.zh-en.en",
            "training-parallel-nc-v13/news-commentary-v13.zh-en.zh",
        ],
    ]
]
_NC_TEST_DATASETS = [
    [
        _STAT_MT_URL + "dev.tgz",
        ("dev/newsdev2017-enzh-src.en.sgm", "dev/newsdev2017-enzh-ref.zh.sgm"),
    ]
]
_S3 = "https://s3-us-west-2.amazonaws.com/twairball.wmt17.zh-en/"
_UN_TRAIN_DATASETS = [
    [_S3 + "UNv1.0.en-zh.tar.gz", ["en-zh/UNv1.0.en-zh.en", "en-zh/UNv1.0.en-zh.zh"]]
]
_CWMT_CORPORA = [  # (folder in cwmt.tgz, English file, Chinese file), in T2T's order
    ("casia2015", "casia2015_en.txt", "casia2015_ch.txt"),
    ("casict2015", "casict2015_en.txt", "casict2015_ch.txt"),
    ("neu2017", "NEU_en.txt", "NEU_cn.txt"),
    ("datum2015", "datum_en.txt", "datum_ch.txt"),
    *(("datum2017", f"Book{i}_en.txt", f"Book{i}_cn.txt") for i in range(1, 21)),
]
_CWMT_TRAIN_DATASETS = [
    [_S3 + "cwmt.tgz", [f"cwmt/{folder}/{en}", f"cwmt/{folder}/{zh}"]]
    for folder, en, zh in _CWMT_CORPORA
]


def get_filename(dataset: list) -> str:
    """T2T's: the archive name of a corpus list's first url (what --tmp_dir must hold)."""
    return dataset[0][0].split("/")[-1]


@t2t_registry.register_problem
class TranslateEnzhWmt32k(TranslateProblem):
    """T2T's WMT En-Zh problem: News Commentary, plus CWMT and UN when placed in --tmp_dir."""

    @property
    def approx_vocab_size(self) -> int:
        return 2**15

    @property
    def source_vocab_name(self) -> str:
        return f"{self.vocab_filename}.en"

    @property
    def target_vocab_name(self) -> str:
        return f"{self.vocab_filename}.zh"

    def get_training_dataset(self, tmp_dir: str) -> list:
        """T2T's: News Commentary, and each manually downloaded corpus whose archive is in
        ``tmp_dir``; appended to the module's list itself (T2T's aliasing, kept)."""
        full_dataset = _NC_TRAIN_DATASETS
        for dataset in (_CWMT_TRAIN_DATASETS, _UN_TRAIN_DATASETS):
            filename = get_filename(dataset)
            if fileio.exists(os.path.join(tmp_dir, filename)):
                full_dataset += dataset
            else:
                print(  # T2T logs it (tf.logging.info), with its class name misspelt
                    f"[TranslateEzhWmt] dataset incomplete, you need to manually download "
                    f"{filename}",
                    file=sys.stderr,
                )
        return full_dataset

    def _compiled_name(self, train: bool) -> str:
        """T2T's compiled file base in --tmp_dir (``generate_encoded_samples``)."""
        return f"wmt_enzh_{self.approx_vocab_size}k_tok_{'train' if train else 'dev'}"

    def generate_encoded_samples(
        self, data_dir: str, tmp_dir: str, dataset_split: str
    ) -> Iterator[dict]:
        """T2T's: both vocabularies (each from its side of the train corpora, built when
        missing), then the split's compiled pairs encoded with them, EOS appended."""
        train = dataset_split == DatasetSplit.TRAIN
        train_dataset = self.get_training_dataset(tmp_dir)
        datasets = train_dataset if train else _NC_TEST_DATASETS
        vocabs = []
        for side, name in enumerate((self.source_vocab_name, self.target_vocab_name)):
            vocabs.append(
                generator_utils.get_or_generate_vocab(
                    data_dir,
                    tmp_dir,
                    name,
                    self.approx_vocab_size,
                    [[item[0], [item[1][side]]] for item in train_dataset],
                    file_byte_budget=1e8,
                    max_subtoken_length=self.max_subtoken_length,
                )
            )
        data_path = compile_data(tmp_dir, datasets, self._compiled_name(train))
        pairs = text2text_txt_iterator(data_path + ".lang1", data_path + ".lang2")
        return text2text_generate_encoded(pairs, vocabs[0], vocabs[1])

    def feature_encoders(self, data_dir: str) -> dict:
        """T2T's: the English subwords for the inputs, the Chinese ones for the targets; a
        missing file is one line naming it (T2T's fails reading it)."""
        found = {}
        names = (("inputs", self.source_vocab_name), ("targets", self.target_vocab_name))
        for feature, name in names:
            path = os.path.join(data_dir or "", name)
            if not fileio.isfile(path):
                raise DataError(
                    f"Vocabulary file {path} not found. Run: t2t-datagen --problem={self.name} "
                    f"--data_dir={data_dir} --tmp_dir=<raw data dir>"
                )
            found[feature] = SubwordTextEncoder(path)
        return found

    def source_lines(self, tmp_dir: str, split: str) -> tuple[list[str], list[str]]:
        """The decoder's texts of a split (T2T decodes its records): T2T's compiled files of
        it in ``tmp_dir``, compiled when missing."""
        self.check_runnable()
        self.check_split_decodes()
        train = split_file_name(split) == "train"
        path = os.path.join(tmp_dir, self._compiled_name(train))
        if not (fileio.exists(path + ".lang1") and fileio.exists(path + ".lang2")):
            datasets = self.get_training_dataset(tmp_dir) if train else _NC_TEST_DATASETS
            path = compile_data(tmp_dir, datasets, self._compiled_name(train))
        pairs = list(text2text_txt_iterator(path + ".lang1", path + ".lang2"))
        sources, targets = [p["inputs"] for p in pairs], [p["targets"] for p in pairs]
        return rev_variant.variant_texts(self, sources, targets)


@t2t_registry.register_problem
class TranslateEnzhWmt8k(TranslateEnzhWmt32k):
    """T2T's toy En-Zh problem: News Commentary only, 10 train shards."""

    @property
    def approx_vocab_size(self) -> int:
        return 2**13

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    def get_training_dataset(self, tmp_dir: str) -> list:
        """T2T's: the module's News Commentary list (as a 32k run may have extended it)."""
        return _NC_TRAIN_DATASETS


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (TranslateEnzhWmt32k, TranslateEnzhWmt8k)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.translate_enzh")
