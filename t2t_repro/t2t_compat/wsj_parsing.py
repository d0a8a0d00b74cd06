"""T2T 1.15's registered ``wsj_parsing`` (``data_generators/wsj_parsing.py``): ``WsjParsing``, a
``Text2textTmpdir`` over trees T2T's own scripts wrote, one a line, and the module's functions.

It reads ``wsjTrain.trees`` and ``wsjEval.trees`` in --tmp_dir (a line's words are the inputs,
its linearised tree with the POS tags the targets: ``words_and_tags_from_wsj_tree``) and builds
one shared 2^15 subword vocabulary ``vocab.wsj_parsing.32768.subwords`` from the first 1,000
lines of ``wsj.train.text.txt`` and ``wsj.train.tags.txt``; 100 train shards and one dev
shard, target space 0 and ``Text2TextProblem``'s metrics, as T2T. This project's own parser of
the treebank's ``.mrg`` files (the paper's problem) is ``wsj_parsing_ldc`` (docs/parsing.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator
from t2t_repro.t2t_compat.tmpdir_problems import Text2textTmpdir

# The project's files of this name before T2T's problem took it: a data dir holding them was
# written by the paper's problem, now wsj_parsing_ldc.
_PAPER_PROBLEMS_VOCAB = "vocab.wsj_parsing.targets.tokens"


class TreeLineError(DataError, AssertionError):
    """A tree T2T's ``words_and_tags_from_wsj_tree`` cannot read (T2T fails its ``assert``)."""


def words_and_tags_from_wsj_tree(tree_string: str) -> tuple[str, str]:
    """(the words, the linearised tree) of one tree, as T2T reads it: an opening bracket's
    label is a tag, a word's closing brackets past its POS tag's are ``/LABEL`` tags, and the
    first and last tags (T2T's ``TOP`` and its closer) are dropped. Token by token on the raw
    text, quirks included (no normalisation, the outer tags dropped whatever they are), where
    ``parsing.linearize`` linearises the project's normalised trees."""
    labels: list[str] = []  # open labels, innermost last
    tags: list[str] = []
    words: list[str] = []
    for token in tree_string.split():
        if token.startswith("("):
            labels.append(token[1:])
            tags.append(token[1:])
            continue
        if len(token) < 2 or not token.endswith(")") or not labels:
            raise TreeLineError(
                f"not a bracketed tree as T2T reads one: {token!r} in {tree_string!r}"
            )
        labels.pop()  # the word's POS tag
        word = token[:-1]
        while word.endswith(")"):
            if not labels or len(word) < 2:
                raise TreeLineError(f"unbalanced brackets at {token!r} in {tree_string!r}")
            tags.append("/" + labels.pop())
            word = word[:-1]
        words.append(word)
    return " ".join(words), " ".join(tags[1:-1])


def token_generator(tree_path: str, source_token_vocab, target_token_vocab, eos=None):
    """T2T's: each tree of ``tree_path`` as ids, ``eos`` appended when given."""
    end = [] if eos is None else [eos]
    with fileio.open(tree_path, encoding="utf-8") as trees:
        for line in trees:
            source, target = words_and_tags_from_wsj_tree(line)
            yield {
                "inputs": source_token_vocab.encode(source.strip()) + end,
                "targets": target_token_vocab.encode(target.strip()) + end,
            }


def parsing_token_generator(data_dir, tmp_dir, train, source_vocab_size, target_vocab_size):
    """T2T's stub, which fails as T2T's does: its vocabularies were never implemented."""
    del data_dir, tmp_dir, train, source_vocab_size, target_vocab_size
    raise AssertionError("Vocabulary generation not implemented")


@t2t_registry.register_problem
class WsjParsing(Text2textTmpdir):
    """T2T's ``WsjParsing``: trees one a line in --tmp_dir, words in, linearised tree out."""

    TRAIN_FILES = ("wsj.train.text.txt", "wsj.train.tags.txt")  # the vocabulary's text
    TRAIN_FILES_TREE = "wsjTrain.trees"
    EVAL_FILES_TREE = "wsjEval.trees"

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        del data_dir
        is_training = dataset_split == DatasetSplit.TRAIN
        path = os.path.join(tmp_dir, self.TRAIN_FILES_TREE if is_training else self.EVAL_FILES_TREE)
        self._need(path)
        with fileio.open(path, encoding="utf-8") as trees:
            for number, line in enumerate(trees, 1):
                try:
                    words, tags = words_and_tags_from_wsj_tree(line)
                except TreeLineError as e:
                    raise TreeLineError(f"{path}:{number}: {e}") from None
                yield {"inputs": words, "targets": tags}

    def generate_text_for_vocab(self, data_dir, tmp_dir) -> Iterator[str]:
        inputs, targets = (os.path.join(tmp_dir, f) for f in self.TRAIN_FILES)
        for path in (inputs, targets):
            self._need(path)
        for i, sample in enumerate(text2text_txt_iterator(inputs, targets)):
            yield sample["inputs"]
            yield sample["targets"]
            if self.max_samples_for_vocab and (i + 1) >= self.max_samples_for_vocab:
                break

    @property
    def max_samples_for_vocab(self) -> int:
        return 1000

    def feature_encoders(self, data_dir: str) -> dict:
        self._not_the_papers(data_dir)
        return super().feature_encoders(data_dir)

    def generate_data(self, data_dir, tmp_dir, task_id=-1, **tool_flags):
        self._not_the_papers(data_dir)
        return super().generate_data(data_dir, tmp_dir, task_id, **tool_flags)

    generate_data.t2t_tool_entry = True  # the tools' entry already (Text2TextProblem's)

    @staticmethod
    def _not_the_papers(data_dir: str) -> None:
        """One line for a data dir of the project's former ``wsj_parsing``, whose files
        (named after the problem) datagen would mix with T2T's."""
        if data_dir and fileio.exists(os.path.join(data_dir, _PAPER_PROBLEMS_VOCAB)):
            raise DataError(
                f"{data_dir} holds the data of this project's former wsj_parsing (the paper's "
                "parser of the treebank's .mrg files, now named wsj_parsing_ldc); wsj_parsing "
                "is T2T's problem now (wsjTrain.trees, docs/parsing.md). Rerun t2t-datagen "
                f"--problem=wsj_parsing_ldc --data_dir={data_dir} with your --tmp_dir and use "
                "--problem=wsj_parsing_ldc."
            )

    def _need(self, path: str) -> None:
        if not fileio.exists(path):
            raise DataError(
                f"wsj_parsing: {path} not found. T2T's wsj_parsing reads wsjTrain.trees and "
                "wsjEval.trees (one tree a line, with a TOP root) and wsj.train.text.txt and "
                "wsj.train.tags.txt (the vocabulary's text) in --tmp_dir; for the treebank's "
                ".mrg files use --problem=wsj_parsing_ldc (docs/parsing.md)."
            )
