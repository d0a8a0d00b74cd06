"""T2T 1.15's own registered text problems (``data_generators/text_problems.py``):
``Text2textTmpdir`` (``text2text_tmpdir``) and ``Text2textTmpdirTokens``
(``text2text_tmpdir_tokens``), which read their records from text files in --tmp_dir, and
``Text2TextRemotedir``, their base for a remote folder. ``text_problems`` names them for a
usr_dir; registering them is what importing T2T's module does.
"""

from __future__ import annotations

import os

from t2t_repro import fileio
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat import text_encoder
from t2t_repro.t2t_compat.problem import DatasetSplit, T2TProblemError
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator, txt_line_iterator


@t2t_registry.register_problem
class Text2textTmpdir(Text2TextProblem):
    """T2T's problem without a subclass (``text_problems.py``, ``Text2textTmpdir``): one
    record a line in ``inputs.train.txt``/``targets.train.txt`` and ``inputs.eval.txt``/
    ``targets.eval.txt`` in --tmp_dir."""

    TRAIN_FILES = ("inputs.train.txt", "targets.train.txt")
    EVAL_FILES = ("inputs.eval.txt", "targets.eval.txt")

    def is_generate_per_split(self) -> bool:
        # A method, not a property, in T2T too: T2T only tests its truth, which a bound
        # method always has, so every subclass generates per split.
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        files = self.TRAIN_FILES if dataset_split == DatasetSplit.TRAIN else self.EVAL_FILES
        inputs, targets = (os.path.join(self._tmp_dir_override or tmp_dir, f) for f in files)
        return text2text_txt_iterator(inputs, targets)

    @property
    def _tmp_dir_override(self) -> str | None:
        return None


class Text2TextRemotedir(Text2textTmpdir):
    """``Text2textTmpdir`` reading ``SRC_REMOTE_DIR`` (a ``gs://`` folder, say) instead."""

    SRC_REMOTE_DIR: str | None = None

    @property
    def _tmp_dir_override(self) -> str | None:
        if not self.SRC_REMOTE_DIR:
            raise T2TProblemError(f"{type(self).__name__}: set SRC_REMOTE_DIR to the folder.")
        return self.SRC_REMOTE_DIR


@t2t_registry.register_problem
class Text2textTmpdirTokens(Text2textTmpdir):
    """``Text2textTmpdir`` with a word vocabulary: ``vocab.txt`` in --tmp_dir, one token a
    line; T2T adds ``<pad>``, ``<EOS>`` and ``<UNK>`` (the ``oov_token``) and stores it in
    --data_dir as ``vocab.<name>.tokens`` when the training samples are first asked for."""

    @property
    def vocab_type(self) -> str:
        return VocabType.TOKEN

    @property
    def oov_token(self) -> str:
        return "<UNK>"

    def _generate_vocab(self, tmp_dir: str):
        tokens = [line.strip() for line in txt_line_iterator(os.path.join(tmp_dir, "vocab.txt"))]
        return text_encoder.TokenTextEncoder(None, vocab_list=[self.oov_token, *tokens])

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # No data_dir: the decoder reading a split's texts (source_lines), not datagen.
        vocab_path = data_dir and os.path.join(data_dir, self.vocab_filename)
        if vocab_path and not fileio.exists(vocab_path):
            self._generate_vocab(tmp_dir).store_to_file(vocab_path)
        return super().generate_samples(data_dir, tmp_dir, dataset_split)


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (Text2textTmpdir, Text2textTmpdirTokens)
