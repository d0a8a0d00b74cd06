"""``tensor2tensor.data_generators.ice_parsing``: T2T 1.15.7's ``parsing_icelandic16k``
(``ParsingIcelandic16k``, a plain ``Problem``) and the module's generators.

Its datagen reads ``parsing_train.pairs`` and ``parsing_dev.pairs`` in --tmp_dir (tokenized
Icelandic, a tab, its linearised constituency tree) and builds two subword vocabularies in
--data_dir from the train file's columns: ``ice_source.tokens.vocab.16384`` and
``ice_target.tokens.vocab.256``; 10 train shards and 1 dev shard, shuffled, as T2T's. The
inputs and targets have separate encoders, which the tools read from ``feature_encoders``
(the trainer's input and target vocab sizes, the decoder's two encoders). As in T2T, the
targets' vocab size in the problem hparams is the 256 asked for, not the vocabulary's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import Problem, SpaceID
from t2t_repro.t2t_compat.text_encoder import ByteTextEncoder, SubwordTextEncoder
from t2t_repro.t2t_compat.text_iterators import (
    text2text_generate_encoded,
    text2text_txt_tab_iterator,
)


def _pairs_path(tmp_dir: str, train: bool) -> str:
    """T2T's ``parsing_{train,dev}.pairs`` in ``tmp_dir``; a missing one is one line."""
    path = os.path.join(tmp_dir, "parsing_{}.pairs".format("train" if train else "dev"))
    if not fileio.isfile(path):
        raise DataError(
            f"{path} not found: T2T's ice_parsing reads parsing_train.pairs and "
            "parsing_dev.pairs in --tmp_dir (one 'tokenized sentence<TAB>tree' pair a line); "
            "place them there."
        )
    return path


def tabbed_parsing_token_generator(
    data_dir: str,
    tmp_dir: str,
    train: bool,
    prefix: str,
    source_vocab_size: int,
    target_vocab_size: int,
) -> Iterator[dict]:
    """T2T's: the pairs file's samples encoded with the two subword vocabularies of its
    columns, which are built (from this split's file) when missing. Not a generator, as
    T2T's: the vocabularies are made when called."""
    # T2T: ice_parsing.py, tabbed_parsing_token_generator.
    path = _pairs_path(tmp_dir, train)
    filename = os.path.basename(path)
    source_vocab = generator_utils.get_or_generate_tabbed_vocab(
        data_dir,
        tmp_dir,
        filename,
        0,
        f"{prefix}_source.tokens.vocab.{source_vocab_size}",
        source_vocab_size,
    )
    target_vocab = generator_utils.get_or_generate_tabbed_vocab(
        data_dir,
        tmp_dir,
        filename,
        1,
        f"{prefix}_target.tokens.vocab.{target_vocab_size}",
        target_vocab_size,
    )
    return text2text_generate_encoded(text2text_txt_tab_iterator(path), source_vocab, target_vocab)


def tabbed_parsing_character_generator(tmp_dir: str, train: bool) -> Iterator[dict]:
    """T2T's: the pairs file's samples as bytes (``ByteTextEncoder``) both sides."""
    # T2T: ice_parsing.py, tabbed_parsing_character_generator.
    path = _pairs_path(tmp_dir, train)
    return text2text_generate_encoded(text2text_txt_tab_iterator(path), ByteTextEncoder())


@t2t_registry.register_problem
class ParsingIcelandic16k(Problem):
    """T2T's ``ParsingIcelandic16k``: tokenized Icelandic to constituency trees."""

    @property
    def source_vocab_size(self) -> int:
        return 2**14

    @property
    def targeted_vocab_size(self) -> int:
        return 2**8

    @property
    def input_space_id(self) -> int:
        return SpaceID.ICE_TOK

    @property
    def target_space_id(self) -> int:
        return SpaceID.ICE_PARSE_TOK

    @property
    def num_shards(self) -> int:
        return 10

    def feature_encoders(self, data_dir: str) -> dict:
        # T2T: ice_parsing.py, ParsingIcelandic16k.feature_encoders (separate vocabularies).
        found = {}
        for feature, side, size in (
            ("inputs", "source", self.source_vocab_size),
            ("targets", "target", self.targeted_vocab_size),
        ):
            path = os.path.join(data_dir or "", f"ice_{side}.tokens.vocab.{size}")
            if not fileio.isfile(path):
                raise DataError(
                    f"{self.name}: {path} not found; t2t-datagen --problem={self.name} "
                    "writes it (from parsing_train.pairs in --tmp_dir) into --data_dir."
                )
            found[feature] = SubwordTextEncoder(path)
        return found

    def generate_data(self, data_dir: str, tmp_dir: str, task_id: int = -1) -> None:
        # T2T: ice_parsing.py, ParsingIcelandic16k.generate_data (unshuffled names, then
        # generate_dataset_and_shuffle's shuffle).
        del task_id
        sizes = (self.source_vocab_size, self.targeted_vocab_size)
        generator_utils.generate_dataset_and_shuffle(
            tabbed_parsing_token_generator(data_dir, tmp_dir, True, "ice", *sizes),
            self.training_filepaths(data_dir, self.num_shards, shuffled=False),
            tabbed_parsing_token_generator(data_dir, tmp_dir, False, "ice", *sizes),
            self.dev_filepaths(data_dir, 1, shuffled=False),
        )

    def hparams(self, defaults: Any, unused_model_hparams: Any) -> None:
        # T2T: ice_parsing.py, ParsingIcelandic16k.hparams: the targets' size is the 256
        # asked for; 2.5 is T2T's estimate of tokens a word.
        defaults.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        defaults.vocab_size = {
            "inputs": self.get_feature_encoders()["inputs"].vocab_size,
            "targets": self.targeted_vocab_size,
        }
        defaults.input_space_id = self.input_space_id
        defaults.target_space_id = self.target_space_id
        defaults.loss_multiplier = 2.5


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (ParsingIcelandic16k,)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.ice_parsing")
