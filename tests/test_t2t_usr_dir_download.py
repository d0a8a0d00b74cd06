"""A T2T usr_dir whose ``generate_data`` downloads its corpus (tests/data/t2t_usr_dir_download:
``source_data_files`` URLs of a .tgz and a .tsv, ``maybe_download_from_drive``), served by a
loopback server: t2t-datagen writes byte for byte what T2T 1.15.7's datagen wrote from the same
served files (tools/t2t_reference/make_t2t_download_reference.py), leaves the same files in
--tmp_dir, and a second run downloads nothing."""

import json
import os
import shutil
from pathlib import Path

import pytest

from t2t_repro.commands import datagen
from tests.loopback_http import serving
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIR = HERE / "data" / "t2t_usr_dir_download"
REFERENCE = HERE / "data" / "t2t_usr_dir_download_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    yield from restored_registry({"t2t_usr_dir_download"})


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_usr_dir_downloads_its_corpus_and_writes_what_t2t_writes(tmp_path, monkeypatch):
    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    served = {p.name: p.read_bytes() for p in (REFERENCE / "served").iterdir()}
    argv = [
        f"--problem={','.join(SUMMARY['problems'])}",
        f"--data_dir={tmp_path / 'data'}",
        f"--tmp_dir={tmp_path / 'tmp'}",
        f"--t2t_usr_dir={USR_DIR}",
        "--noprogress",
    ]
    (tmp_path / "data").mkdir()
    with serving(served) as server:
        monkeypatch.setenv("TINY_CORPUS_URL", server.url)
        assert datagen.main(argv) == 0
        assert [path for path, _ in server.requests] == SUMMARY["requests"]
        written = _files(tmp_path / "data")
        shutil.rmtree(tmp_path / "data")  # again from --tmp_dir as the first run left it
        (tmp_path / "data").mkdir()
        assert datagen.main(argv) == 0
        assert len(server.requests) == len(SUMMARY["requests"])  # nothing fetched again
    assert _files(tmp_path / "data") == written
    manifests = {f"{name}.datagen.json" for name in SUMMARY["problems"]}
    assert sorted(set(written) - manifests) == SUMMARY["files"]
    for name in SUMMARY["files"]:  # vocab files, then every shard
        assert written[name] == (REFERENCE / "data" / name).read_bytes(), name
    # --tmp_dir as T2T left it: the downloads, the tarball's files, the compiled pairs.
    assert sorted(_files(tmp_path / "tmp")) == SUMMARY["tmp_files_after_datagen"]
    for name, data in served.items():
        assert (tmp_path / "tmp" / name).read_bytes() == data


def test_offline_the_usr_dir_stops_in_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    """t2t-datagen --offline (T2T_REPRO_OFFLINE=1 for the run)."""
    monkeypatch.delenv("T2T_REPRO_OFFLINE")
    monkeypatch.setenv("TINY_CORPUS_URL", "http://127.0.0.1:9")  # never asked: offline
    (tmp_path / "data").mkdir()
    argv = [
        "--problem=tiny_download_translate",
        f"--data_dir={tmp_path / 'data'}",
        f"--tmp_dir={tmp_path / 'tmp'}",
        f"--t2t_usr_dir={USR_DIR}",
        "--noprogress",
        "--offline",
    ]
    assert datagen.main(argv) == 1
    assert "T2T_REPRO_OFFLINE" not in os.environ  # the flag's setting ends with the run
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "T2T_REPRO_OFFLINE is set" in err, err
    assert f"put it at {tmp_path / 'tmp' / 'tiny_parallel.tgz'}" in err, err
