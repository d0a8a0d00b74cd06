"""A usr_dir problem that subclasses T2T's plain ``Problem`` with its own ``feature_encoders``
(tests/data/t2t_usr_dir_plain, no vocabulary file) trains and decodes with those encoders, as in
T2T, which reads no vocabulary file for it (#54)."""

from pathlib import Path

import pytest

from t2t_repro import registry
from tests.usr_dir_registry import restored_registry

USR_DIR = Path(__file__).parent / "data" / "t2t_usr_dir_plain"


@pytest.fixture
def plain_problem():
    from t2t_repro.usr_dir import import_usr_dir

    fixture = restored_registry({USR_DIR.name})
    next(fixture)
    import_usr_dir(str(USR_DIR))
    yield registry.problem("plain_upcase")
    next(fixture, None)


def test_its_own_encoders_answer_without_a_vocab_file(plain_problem, tmp_path):
    encoders = plain_problem.get_encoders(str(tmp_path))  # an empty data_dir: no vocab file
    assert encoders["inputs"].encode("ab") == [99, 100]  # T2T's ByteTextEncoder: byte + 2
    assert encoders["targets"].decode([67, 68]) == "AB"
    values = plain_problem.problem_hparams(str(tmp_path))
    assert (values["input_vocab_size"], values["target_vocab_size"]) == (258, 258)
