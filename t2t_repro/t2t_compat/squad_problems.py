"""T2T 1.15's SQuAD v1.1 problems (``data_generators/squad.py``) under T2T's names:

- ``squad_text2text``: a ``Text2TextProblem`` ("squad context: ... question: ..." to the first
  answer), T2T's default 32k subword vocabulary and 100/1 shards;
- ``squad``: a ``QuestionAndContext2TextProblem`` (question in, first answer out, the
  paragraph as the records' ``context``), 10/1 shards; T2T's transformer never reads
  ``context``, so it trains question -> answer, here as there;
- ``squad_concat``: ``squad``'s files (``dataset_filename`` "squad"), its inputs joined in the
  input pipeline (``preprocess_example``) as question, ``<EOQ>``'s id, context;
- ``squad_concat_positioned``: ``squad_concat`` whose targets are the answer's positions and
  lengths in the context's ids (examples without one are left out).

T2T's ``train-v1.1.json`` / ``dev-v1.1.json`` are read from --tmp_dir (downloaded there when
missing). ``squad_concat_multi64k`` (files ``squad_multi64k``, 100 train shards, the context
dropped after the join) and ``squad_concat_shared_vocab`` (its kind, ``squad``'s files) take a
wiki language model's vocabulary (``wiki_lm.py``). Not provided (t2t_problems.py):
``squad_text2text_multi64k_packed1k`` (packed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from t2t_repro.t2t_compat import generator_utils, wiki_lm
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem
from t2t_repro.t2t_compat.text_kinds import QuestionAndContext2TextProblem

_URL = "https://rajpurkar.github.io/SQuAD-explorer/dataset"
_TRAINING_SET = "train-v1.1.json"
_DEV_SET = "dev-v1.1.json"


def _generate_examples(tmp_dir: str, dataset_split: str) -> Iterator[dict]:
    """T2T's: each question of the split's file, with its paragraph's context and answers."""
    name = _TRAINING_SET if dataset_split == DatasetSplit.TRAIN else _DEV_SET
    path = generator_utils.maybe_download(tmp_dir, name, os.path.join(_URL, name))
    with tf.io.gfile.GFile(path, mode="r") as f:
        squad = json.load(f)
    for article in squad["data"]:
        title = article["title"].strip() if "title" in article else "no title"
        for paragraph in article["paragraphs"]:
            context = paragraph["context"].strip()
            for qa in paragraph["qas"]:
                answers = [answer["text"].strip() for answer in qa["answers"]]
                yield {
                    "version": squad["version"],
                    "title": title,
                    "context": context,
                    "question": qa["question"].strip(),
                    "id": qa["id"],
                    "answer_starts": [answer["answer_start"] for answer in qa["answers"]],
                    "answers": answers,
                    "num_answers": len(answers),
                    "is_supervised": True,
                }


@t2t_registry.register_problem
class SquadText2text(Text2TextProblem):
    """SQuAD as a Text2TextProblem (T2T's): context and question in, first answer out."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for example in _generate_examples(tmp_dir, dataset_split):
            yield {
                "inputs": f"squad context: {example['context']} question: {example['question']}",
                "targets": example["answers"][0],
            }


@t2t_registry.register_problem
class Squad(QuestionAndContext2TextProblem):
    """T2T's SQuAD question answering: question in, first answer out, the context beside."""

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def is_generate_per_split(self) -> bool:
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for example in _generate_examples(tmp_dir, dataset_split):
            yield {
                "inputs": example["question"],
                "targets": example["answers"][0],
                "context": example["context"],
            }


@t2t_registry.register_problem
class SquadConcat(Squad):
    """T2T's ``squad`` with the question, separator and context joined into the inputs."""

    def dataset_filename(self) -> str:
        return "squad"

    def preprocess_example(self, example: dict, mode: str, model_hparams: Any) -> dict:
        """T2T's (squad.py, ``SquadConcat.preprocess_example``): no truncation, the context
        kept in the example (the input pipeline drops it)."""
        del mode, model_hparams
        sep = tf.convert_to_tensor([self.QUESTION_SEPARATOR_ID], dtype=example["inputs"].dtype)
        example["inputs"] = tf.concat([example["inputs"], sep, example["context"]], 0)
        return example

    def hparams(self, defaults, model_hparams) -> None:
        """T2T's: ``squad``'s, without the context's modality and vocab size."""
        super().hparams(defaults, model_hparams)
        del defaults.modality["context"]
        del defaults.vocab_size["context"]


@t2t_registry.register_problem
class SquadConcatMulti64k(SquadConcat):
    """``squad_concat`` with the four Wikipedias' 64k vocabulary (squad.py), its own files."""

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 100},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    def preprocess_example(self, example: dict, mode: str, model_hparams: Any) -> dict:
        """T2T's (``SquadConcatMulti64k.preprocess_example``): the join, then the context
        popped from the example."""
        example = super().preprocess_example(example, mode, model_hparams)
        example.pop("context")
        return example

    def dataset_filename(self) -> str:
        return "squad_multi64k"

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@t2t_registry.register_problem
class SquadConcatSharedVocab(SquadConcatMulti64k):
    """``squad_concat_multi64k`` on ``squad``'s files, English Wikipedia's 32k vocabulary."""

    def dataset_filename(self) -> str:
        return "squad"

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return wiki_lm.LanguagemodelEnWiki32k()


@t2t_registry.register_problem
class SquadConcatPositioned(SquadConcat):
    """T2T's ``squad_concat`` whose targets are the answer's (position, length) pairs."""

    def generate_targets(self, targets: list[int], context: list[int]) -> list[int]:
        """T2T's: each place the answer's ids (EOS off) occur in the context's (T2T's bound:
        one at the context's very end, by its EOS, is not looked at)."""
        targets = targets[:-1]
        found = []
        for i in range(len(context) - len(targets)):
            if context[i : i + len(targets)] == targets:
                found += [i, len(targets)]
        return found

    def generate_encoded_samples(
        self, data_dir: str, tmp_dir: str, dataset_split: str
    ) -> Iterator[dict]:
        samples = super().generate_encoded_samples(data_dir, tmp_dir, dataset_split)
        for sample in samples:
            sample["targets"] = self.generate_targets(sample["targets"], sample["context"])
            if sample["targets"]:
                yield sample


T2T_REGISTERED_PROBLEMS = (
    SquadText2text,
    Squad,
    SquadConcat,
    SquadConcatMulti64k,
    SquadConcatSharedVocab,
    SquadConcatPositioned,
)
