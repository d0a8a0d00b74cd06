"""T2T 1.15.7's ``algorithmic_math_two_variables`` (t2t_compat/algorithmic_math_two_variables.py)
under T2T's name: its archive downloaded from a loopback server standing in for T2T's address
(with T2T's User-Agent), or found in --tmp_dir, and datagen writes what T2T 1.15.7's writes
(every shard's records, in order); T2T's problem hparams; a line T2T's unpacking fails on is
one line naming the file and line (tests/data/t2t_algorithmic_math_two_variables_reference,
made by T2T itself: tools/t2t_reference/make_t2t_algorithmic_math_two_variables_reference.py)."""

import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import algorithmic_math_two_variables as math2
from tests.loopback_http import serving
from tests.t2t_records import ids_digest, problem_facts, record_ids

NAME = "algorithmic_math_two_variables"
REFERENCE = Path(__file__).parent / "data" / "t2t_algorithmic_math_two_variables_reference"
EXPECTED = json.loads((REFERENCE / f"t2t_1.15.7_{NAME}.json").read_text(encoding="utf-8"))
ARCHIVE = "mathematical_language_understanding_train.tar.gz"
FLAGS = ["--noprogress", "--num_workers=1"]
T2T_URL = math2._URL  # the tests serve it from a loopback server


@pytest.fixture(autouse=True)
def _registered():
    """The class registered again, should a test before have restored the registry."""
    for cls in math2.T2T_REGISTERED_PROBLEMS:
        registry.register_problem(cls.problem_name)(cls)


def _argv(root: Path) -> list[str]:
    return [f"--problem={NAME}", f"--tmp_dir={root / 'tmp'}", f"--data_dir={root / 'data'}"]


def _decoded(path: Path) -> list[list[str]]:
    """Each record's [inputs, targets] as T2T's ByteTextEncoder decodes them, EOS removed."""
    found = []
    for ids in record_ids(path):
        assert [i[-1] for i in ids] == [1, 1], ids  # EOS
        found.append([bytes(x - 2 for x in i[:-1]).decode("utf-8") for i in ids])
    return found


def _check_data_dir(data_dir: Path) -> None:
    want = EXPECTED["datagen"]
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]  # 10 train shards, 1 dev shard, no vocabulary file
    for shard in files:
        assert _decoded(data_dir / shard) == want["records"][shard], shard
        count, digest = ids_digest(data_dir / shard, None)  # every feature: inputs, targets
        assert (count, digest) == (len(want["records"][shard]), want["records_sha256"][shard])


def test_datagen_downloads_the_archive_and_writes_what_t2t_1_15_7_writes(tmp_path, monkeypatch):
    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    archive = (REFERENCE / "tmp" / ARCHIVE).read_bytes()
    with serving({ARCHIVE: archive}) as server:
        monkeypatch.setattr(math2, "_URL", f"{server.url}/full/{ARCHIVE}")
        assert datagen.main([*_argv(tmp_path), *FLAGS]) == 0
    _check_data_dir(tmp_path / "data")
    assert [path for path, _ in server.requests] == [f"/full/{ARCHIVE}"]
    t2t_request = EXPECTED["datagen"]["requests"]
    assert [r["url"] for r in t2t_request] == [EXPECTED["url"]] == [T2T_URL]
    assert server.user_agents == [r["headers"]["User-Agent"] for r in t2t_request]
    tmp_files = sorted(p.name for p in (tmp_path / "tmp").iterdir())
    assert tmp_files == EXPECTED["datagen"]["tmp_files_after"]  # the archive, its text file
    assert (tmp_path / "tmp" / ARCHIVE).read_bytes() == archive


def test_an_archive_or_its_text_file_in_tmp_dir_is_read_offline(tmp_path, capsys):
    """The archive already in --tmp_dir (T2T would fetch it again), then its extracted file
    alone: nothing downloaded; neither: one line naming the archive and where to put it."""
    shutil.copytree(REFERENCE / "tmp", tmp_path / "tmp")
    assert datagen.main([*_argv(tmp_path), "--offline", *FLAGS]) == 0
    _check_data_dir(tmp_path / "data")
    (tmp_path / "tmp" / ARCHIVE).unlink()
    shutil.rmtree(tmp_path / "data")
    assert datagen.main([*_argv(tmp_path), "--offline", *FLAGS]) == 0
    _check_data_dir(tmp_path / "data")
    (tmp_path / "tmp" / "symbolic_math_train.txt").unlink()
    shutil.rmtree(tmp_path / "data")
    capsys.readouterr()
    assert datagen.main([*_argv(tmp_path), "--offline", *FLAGS]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "T2T_REPRO_OFFLINE is set" in err and f"{tmp_path / 'tmp' / ARCHIVE}" in err, err


def test_problem_hparams_and_encoders_are_t2ts(tmp_path):
    problem = registry.problem(NAME)
    encoders = problem.feature_encoders(str(tmp_path))  # bytes: no vocabulary file
    assert {
        **problem_facts(problem, tmp_path),
        "vocab_type": problem.vocab_type,
        "is_generate_per_split": problem.is_generate_per_split,
        "encoders": {k: type(e).__name__ for k, e in sorted(encoders.items())},
        "class": type(problem).__name__,
    } == EXPECTED["problem"]
    assert EXPECTED["registered"] == [c.problem_name for c in math2.T2T_REGISTERED_PROBLEMS]


@pytest.mark.parametrize("case", sorted(EXPECTED["bad_lines"]))
def test_a_line_t2t_cannot_unpack_is_one_line_naming_it(case, tmp_path, capsys):
    t2t = EXPECTED["bad_lines"][case]
    if t2t["error"]["type"] == "ValueError":  # T2T's unpacking, at that line
        assert t2t["samples_before_error"] == t2t["bad_line"] - 1
    else:  # T2T decodes its read-ahead before yielding a line
        assert t2t["error"]["type"] == "UnicodeDecodeError" and case == "not_utf8"
    shutil.copytree(REFERENCE / "bad" / case, tmp_path / "tmp")
    assert datagen.main([*_argv(tmp_path), "--offline", *FLAGS]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"symbolic_math_train.txt, line {t2t['bad_line']}: " in err, err
    with pytest.raises(ValueError, match=f"line {t2t['bad_line']}: "):  # T2T's type, too
        list(math2.problem_answer_pairs(str(tmp_path / "tmp" / "symbolic_math_train.txt")))


def test_lines_end_as_pythons_text_files_end_them(tmp_path):
    """T2T's ``open(path, "r")``: ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line."""
    path = tmp_path / "symbolic_math_train.txt"
    path.write_bytes(b"a:1\r\nb:2\rc:3\n d:4 \r")
    got = [(s["inputs"], s["targets"]) for s in math2.problem_answer_pairs(str(path))]
    assert got == [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]
    path.write_bytes(b"a:1\rb:2\r\n\r\nc:\xff3\n")  # numbered as those lines are
    with pytest.raises(ValueError, match=r"symbolic_math_train.txt, line 4: not UTF-8"):
        list(math2.problem_answer_pairs(str(path)))
