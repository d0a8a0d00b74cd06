"""``tensor2tensor.data_generators.subject_verb_agreement``: T2T 1.15.7's subject-verb agreement
problems (Linzen et al. 2016) under T2T's names: ``sva_number_prediction`` (the words before
the verb, classified ``VBZ``/``VBP``: a text classifier, ``--model=transformer_encoder``) and
``sva_language_modeling`` (the words up to the verb: a language model).

Both read ``agr_50_mostcommon_10K.tsv.gz`` (in --tmp_dir or downloaded there), shuffle all its
rows with Python's global ``random`` seeded 1, as T2T does (so T2T's shuffle of the shards
continues from that state), and take 9% for train, 1% for dev and, of the rest, the rows whose
intervening nouns all differ in number from the subject for test (10 shards). The vocabulary
(``vocab.<name>.tokens``) is every row's sentence's words by count, then alphabetically.

One difference: T2T 1.15.7 hands ``csv.DictReader`` the gzip file's bytes, which Python 3's
csv refuses (T2T's datagen of these two fails there); here the file is read as UTF-8 text, which
is what T2T's Python 2 code read (tools/t2t_reference/make_t2t_text_tasks_reference.py runs T2T
with that one change).
"""

from __future__ import annotations

import collections
import csv
import gzip
import io
import os
import random
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import generator_utils, refusals, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.metrics import Metrics
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_kinds import Text2ClassProblem, Text2SelfProblem

_FILE_NAME = "agr_50_mostcommon_10K"
_TAR = _FILE_NAME + ".tsv.gz"
_URL = "http://tallinzen.net/media/rnn_agreement/" + _TAR
_LABEL_DICT = {"VBZ": 0, "VBP": 1}


def _build_vocab(examples: list[dict], example_field: str, vocab_dir: str, vocab_name: str):
    """T2T's vocabulary: the words of every example's ``example_field`` by count (most
    first), ties alphabetically, after ``<pad>`` and ``<EOS>``; the file read when there."""
    vocab_path = os.path.join(vocab_dir, vocab_name)
    if fileio.exists(vocab_path):
        return text_encoder.TokenTextEncoder(vocab_path)
    counts = collections.Counter(w for e in examples for w in e[example_field].split())
    words = [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    encoder = text_encoder.TokenTextEncoder(None, vocab_list=words)
    encoder.store_to_file(vocab_path)
    return encoder


def _rows(path: str) -> Iterator[dict]:
    """The tsv's rows as dicts, digit-only values as ints (T2T's ``load_examples``)."""
    with gzip.open(path, "rb") as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as f:
        for number, row in enumerate(csv.DictReader(f, delimiter="\t"), 2):
            if None in row or None in row.values():
                raise DataError(f"{path}, line {number}: not as many fields as the header.")
            yield {k: int(v) if v.isdigit() else v for k, v in row.items()}


def load_examples(
    tmp_dir: str, prop_train: float = 0.09, prop_val: float = 0.01
) -> tuple[list, list, list, list]:
    """``(all, train, val, test)``: the rows shuffled with ``random.seed(1)`` (the global
    generator, as T2T's), the first ``prop_train`` for train, the next ``prop_val`` for val,
    and of the rest those with ``n_intervening == n_diff_intervening`` for test."""
    infile = generator_utils.maybe_download(tmp_dir, _TAR, _URL)
    all_examples = list(_rows(infile))
    random.seed(1)
    random.shuffle(all_examples)
    n_train = int(len(all_examples) * prop_train)
    n_val = n_train + int(len(all_examples) * prop_val)
    rest = all_examples[n_val:]
    test = [e for e in rest if e["n_intervening"] == e["n_diff_intervening"]]
    return all_examples, all_examples[:n_train], all_examples[n_train:n_val], test


class _Sva:
    """What T2T's two problems share: splits, proportions, vocabulary, the examples."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 1},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 10},
        ]

    @property
    def train_proportion(self) -> float:
        return 0.09

    @property
    def validation_proportion(self) -> float:
        return 0.01

    @property
    def vocab_type(self) -> str:
        return VocabType.TOKEN

    def _examples(self, data_dir: str | None, tmp_dir: str, dataset_split: str) -> list[dict]:
        """The split's rows; the vocabulary stored first (no ``data_dir``: a split's texts
        read for decoding, no vocabulary written)."""
        every, train, val, test = load_examples(
            tmp_dir, self.train_proportion, self.validation_proportion
        )
        if data_dir:
            _build_vocab(every, "sentence", data_dir, self.vocab_filename)
        return {DatasetSplit.TRAIN: train, DatasetSplit.EVAL: val, DatasetSplit.TEST: test}[
            dataset_split
        ]


@t2t_registry.register_problem
class SvaNumberPrediction(_Sva, Text2ClassProblem):
    """The verb's number (``VBZ`` 0, ``VBP`` 1) from the words before it."""

    @property
    def num_classes(self) -> int:
        return 2

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return ["VBZ", "VBP"]

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        # Not a generator: T2T reads the file and stores the vocabulary when called.
        examples = self._examples(data_dir, tmp_dir, dataset_split)

        def samples() -> Iterator[dict]:
            for example in examples:
                words = example["sentence"].split()[: int(example["verb_index"]) - 1]
                yield {"inputs": " ".join(words), "label": _LABEL_DICT[example["verb_pos"]]}

        return samples()

    def eval_metrics(self) -> list[str]:
        return [Metrics.ACC]


@t2t_registry.register_problem
class SvaLanguageModeling(_Sva, Text2SelfProblem):
    """The sentence's words up to the verb, as a language model's targets."""

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        examples = self._examples(data_dir, tmp_dir, dataset_split)

        def samples() -> Iterator[dict]:
            for example in examples:
                words = example["sentence"].split()[: int(example["verb_index"])]
                yield {"targets": " ".join(words)}

        return samples()


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (SvaNumberPrediction, SvaLanguageModeling)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.subject_verb_agreement")
