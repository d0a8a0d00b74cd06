"""``tensor2tensor.data_generators.desc2code``: T2T 1.15.7's Description2Code problems
(OpenAI's coding challenges: a problem's description -> a solution), ``programming_desc2code_py``
and ``programming_desc2code_cpp``, their classes, constants and ``generator_samples``.

Their datagen fails in T2T 1.15.7 and is refused here in one line before anything is written:
T2T's ``generate_encoded_samples`` asserts that no input vocabulary is named, while
``vocab_input_filename`` names ``vocab.endefr.32768``, and it never builds one (its source
vocabulary is ``None``). Records made otherwise train, as in T2T: the inputs' encoder is the
subword vocabulary ``vocab.endefr.32768`` in --data_dir, the targets' ``vocab.py.4096`` or
``vocab.cpp.4096``. ``generator_samples`` reads T2T's ``description2code_current.zip`` (from
--tmp_dir, or Google Drive) as T2T's: the folders holding ``description`` and the language's
solutions folder, each solution whose text names none of the language's filter patterns.
"""

from __future__ import annotations

import collections
import os
import re
import zipfile
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, SpaceID, T2TProblemError
from t2t_repro.t2t_compat.subword_text_encoder import SubwordTextEncoder
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem
from t2t_repro.t2t_compat.text_encoder import EOS_ID

EOS = EOS_ID

_DATASET_URL = "https://drive.google.com/uc?export=download&id=0Bz3fihKG133ceWNFQTQ5S0xhZUk"
_DATASET_FILENAME = "description2code_current.zip"
_DATASET_PB_PATH = "description2code_current/"
_DESC_DIR_NAME = "description"
_VOCAB_EN_FILENAME = "vocab.endefr"
_RE_CPP_INLINE_COMMENT = re.compile("//.*?\n")


CodingPbConstants = collections.namedtuple(
    "CodingPbConstants", ["code_dir_name", "vocab_filename", "filter_patterns", "target_space"]
)
PB_PY = CodingPbConstants(
    code_dir_name="solutions_python",
    vocab_filename="vocab.py",
    filter_patterns=["#include", "# include", "import java."],
    target_space=SpaceID.PY_TOK,
)
PB_CPP = CodingPbConstants(
    code_dir_name="solutions_c++",
    vocab_filename="vocab.cpp",
    filter_patterns=["import java."],
    target_space=SpaceID.CPP_TOK,
)
CodingPbInfo = collections.namedtuple("CodingPbInfo", "desc_file, code_files")


class Desc2CodeProblem(Text2TextProblem):
    """T2T's base class: ``pb_constants`` names the language's folder, vocabulary, filters."""

    @property
    def pb_constants(self) -> CodingPbConstants:
        raise NotImplementedError()

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def input_vocab_size(self) -> int:
        return 2**15

    @property
    def target_vocab_size(self) -> int:
        return 2**12

    @property
    def vocab_input_filename(self) -> str:
        return f"{_VOCAB_EN_FILENAME}.{self.input_vocab_size}"

    @property
    def vocab_target_filename(self) -> str:
        return f"{self.pb_constants.vocab_filename}.{self.target_vocab_size}"

    def preprocess_target(self, target: str) -> str:
        """T2T's hook on a solution's text; the base leaves it as it is."""
        return target

    @property
    def is_generate_per_split(self) -> bool:
        return True  # T2T's is a method, so always true

    def feature_encoders(self, data_dir: str) -> dict:
        """T2T's: two subword vocabularies read from ``data_dir``, which its datagen never
        writes (missing: one line)."""
        encoders = {}
        for key, name in (
            ("inputs", self.vocab_input_filename),
            ("targets", self.vocab_target_filename),
        ):
            path = os.path.join(data_dir or "", name)
            if not data_dir or not fileio.exists(path):
                raise T2TProblemError(
                    f"{self.name}: its {key}' vocabulary {path} is missing, and T2T's datagen "
                    "of it cannot make one: put a subword vocabulary of that name in --data_dir."
                )
            encoders[key] = SubwordTextEncoder(path)
        return encoders

    def check_datagen(self) -> None:
        """Before anything is written: T2T's datagen of it fails (AssertionError)."""
        raise T2TProblemError(
            f"{self.name}: T2T 1.15.7's datagen of it cannot run (generate_encoded_samples "
            f"asserts no input vocabulary is named, yet it names {self.vocab_input_filename}, "
            "and builds none); train it on records made otherwise, with the vocabularies "
            f"{self.vocab_input_filename} and {self.vocab_target_filename} in --data_dir, or "
            "write a usr_dir subclass whose generate_encoded_samples builds both."
        )

    def check_runnable(self) -> None:
        """Records made otherwise train, as in T2T (its datagen alone fails)."""

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        self.check_datagen()
        return iter(())


@t2t_registry.register_problem
class ProgrammingDesc2codePy(Desc2CodeProblem):
    """Description to Python solution."""

    @property
    def pb_constants(self) -> CodingPbConstants:
        return PB_PY

    def preprocess_target(self, target: str) -> str:
        """T2T's: each tab as four spaces."""
        return target.replace("\t", "    ")


@t2t_registry.register_problem
class ProgrammingDesc2codeCpp(Desc2CodeProblem):
    """Description to C++ solution."""

    @property
    def pb_constants(self) -> CodingPbConstants:
        return PB_CPP

    def preprocess_target(self, target: str) -> str:
        """T2T's: ``//`` comments (to the line's end) dropped, whitespace runs as one space."""
        return " ".join(re.sub(_RE_CPP_INLINE_COMMENT, " ", target).split())


def generator_samples(tmp_dir: str, pb_cst: CodingPbConstants) -> Iterator[CodingPbInfo]:
    """Each challenge folder's description file and kept solution files (T2T's function):
    the zip fetched and extracted into ``tmp_dir`` first when its folder is not there."""
    archive = generator_utils.maybe_download_from_drive(tmp_dir, _DATASET_FILENAME, _DATASET_URL)
    root = os.path.join(tmp_dir, _DATASET_PB_PATH)
    if not fileio.exists(root):
        with zipfile.ZipFile(archive, "r") as z:
            z.extractall(tmp_dir)
    for subdir, dirs, _ in os.walk(root):
        if _DESC_DIR_NAME not in dirs or pb_cst.code_dir_name not in dirs:
            continue
        code_files = []
        for path in sorted(fileio.glob(os.path.join(subdir, pb_cst.code_dir_name, "*.txt"))):
            with open(path, encoding="utf-8") as f:
                content = f.read()
            if not any(p in content for p in pb_cst.filter_patterns):
                code_files.append(path)
        yield CodingPbInfo(os.path.join(subdir, _DESC_DIR_NAME, "description.txt"), code_files)


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (ProgrammingDesc2codePy, ProgrammingDesc2codeCpp)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.desc2code")
