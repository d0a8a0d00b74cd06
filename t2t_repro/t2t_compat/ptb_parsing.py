"""T2T 1.15.7's PTB parsing problems of ``data_generators/problem_hparams.py``:
``parsing_english_ptb8k`` and ``parsing_english_ptb16k`` (``ParsingEnglishPtb8k``,
``ParsingEnglishPtb16k``), plain ``Problem``s.

T2T gives them no datagen (``Problem.generate_data`` raises ``NotImplementedError``): they train
on a data dir T2T's users made, which holds their shards and subword vocabularies under T2T's
names (``vocab.endefr.8192``; ``wsj_source.vocab.512`` and ``wsj_target.vocab.16384``). Their
feature encoders and problem hparams (vocab sizes, space ids 3 -> 15, and ptb8k's
``loss_multiplier`` 2.0 and ``batch_size_multiplier`` 256) are T2T's, so such a data dir
trains here; their datagen is refused in one line naming what to place in --data_dir.
``t2t_modules.IMPLEMENTED`` gives these classes under T2T's module name.
"""

from __future__ import annotations

import os
from typing import Any

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.modalities import ModalityType
from t2t_repro.t2t_compat.problem import Problem, T2TProblemError
from t2t_repro.t2t_compat.subword_text_encoder import SubwordTextEncoder


class NoDatagenError(T2TProblemError, NotImplementedError):
    """T2T's base ``Problem.generate_data`` (``NotImplementedError``), said in one line."""


class _PtbParsingProblem(Problem):
    """What both share: vocabularies T2T's users made, read from --data_dir; no datagen."""

    def vocab_filenames(self) -> tuple[str, ...]:
        """The vocabulary files ``feature_encoders`` reads from the data dir."""
        raise NotImplementedError()

    def _subwords(self, data_dir: str | None, filename: str) -> SubwordTextEncoder:
        """T2T's ``SubwordTextEncoder(path)``; a missing file is one line naming what to place
        in --data_dir (T2T fails to open it)."""
        path = os.path.join(data_dir or "", filename)
        if not fileio.isfile(path):
            raise DataError(f"{self.name}: {path} not found. {self._place_in_data_dir()}")
        return SubwordTextEncoder(path)

    def _place_in_data_dir(self) -> str:
        return (
            f"T2T 1.15.7 gives {self.name} no datagen (problem_hparams.py): place T2T's "
            f"vocabularies {' and '.join(self.vocab_filenames())} and the "
            f"{self.name}-train-*/-dev-* shards in --data_dir (or use wsj_parsing or "
            "parsing_icelandic16k, which have a datagen)."
        )

    def generate_data(self, data_dir: str, tmp_dir: str, task_id: int = -1) -> None:
        # T2T: problem.py, Problem.generate_data (raises NotImplementedError).
        del data_dir, tmp_dir, task_id
        raise NoDatagenError(self._place_in_data_dir())

    def _symbol_hparams(self, hp: Any) -> None:
        """T2T's: symbol inputs and targets of the encoders' sizes, English tokens in,
        parse tokens out (``problem_hparams.py``, ``hparams``)."""
        encoders = self.get_feature_encoders()
        hp.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        hp.vocab_size = {
            "inputs": encoders["inputs"].vocab_size,
            "targets": encoders["targets"].vocab_size,
        }
        hp.input_space_id = 3  # SpaceID.EN_TOK
        hp.target_space_id = 15  # SpaceID.PARSE_TOK


@t2t_registry.register_problem
class ParsingEnglishPtb8k(_PtbParsingProblem):
    """T2T's ``ParsingEnglishPtb8k``: one 2^13 subword vocabulary for words and trees."""

    @property
    def target_vocab_size(self) -> int:
        return 2**13

    def vocab_filenames(self) -> tuple[str, ...]:
        return (f"vocab.endefr.{self.target_vocab_size}",)

    def feature_encoders(self, data_dir: str) -> dict:
        # T2T: problem_hparams.py, ParsingEnglishPtb8k.feature_encoders (one shared encoder).
        subtokenizer = self._subwords(data_dir, self.vocab_filenames()[0])
        return {"inputs": subtokenizer, "targets": subtokenizer}

    def hparams(self, defaults: Any, unused_model_hparams: Any) -> None:
        # T2T: problem_hparams.py, ParsingEnglishPtb8k.hparams.
        self._symbol_hparams(defaults)
        defaults.batch_size_multiplier = 256
        defaults.loss_multiplier = 2.0


@t2t_registry.register_problem
class ParsingEnglishPtb16k(_PtbParsingProblem):
    """T2T's ``ParsingEnglishPtb16k``: a 2^9 source and a 2^14 target subword vocabulary."""

    @property
    def vocab_prefix(self) -> str:
        return "wsj"

    @property
    def inputs_target_vocab_size(self) -> int:
        return 2**9

    @property
    def targets_target_vocab_size(self) -> int:
        return 2**14

    def vocab_filenames(self) -> tuple[str, ...]:
        return (
            f"{self.vocab_prefix}_source.vocab.{self.inputs_target_vocab_size}",
            f"{self.vocab_prefix}_target.vocab.{self.targets_target_vocab_size}",
        )

    def feature_encoders(self, data_dir: str) -> dict:
        # T2T: problem_hparams.py, ParsingEnglishPtb16k.feature_encoders (two encoders).
        source, target = self.vocab_filenames()
        return {
            "inputs": self._subwords(data_dir, source),
            "targets": self._subwords(data_dir, target),
        }

    def hparams(self, defaults: Any, unused_model_hparams: Any) -> None:
        # T2T: problem_hparams.py, ParsingEnglishPtb16k.hparams (no multipliers).
        self._symbol_hparams(defaults)


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (ParsingEnglishPtb8k, ParsingEnglishPtb16k)
