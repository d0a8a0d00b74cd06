"""T2T 1.15's ``squad_text2text`` (``data_generators/squad.py``) under T2T's name: SQuAD v1.1
as a ``Text2TextProblem`` ("squad context: ... question: ..." to the first answer), T2T's
default 32k subword vocabulary and 100/1 shards.

T2T's ``train-v1.1.json`` / ``dev-v1.1.json`` are read from --tmp_dir (downloaded there when
missing). T2T's other SQuAD problems are not provided: ``squad``, ``squad_concat`` and
``squad_concat_positioned`` write a third feature, ``context``, which this project's
Transformer does not read (``squad_concat`` joins it to the inputs in T2T's graph, at
reading); ``squad_concat_shared_vocab`` and the ``_multi64k`` ones read a wiki language
model's vocabulary, which is not provided either (t2t_problems.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro.t2t_compat import generator_utils
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem

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


T2T_REGISTERED_PROBLEMS = (SquadText2text,)
