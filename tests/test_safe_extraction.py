"""Corpus tarballs are extracted with tarfile's ``data`` filter (``text_files.extract_safely``),
and on a Python without filters (3.11.0-3.11.3, Debian 12's 3.11.2: ``tarfile.data_filter``
removed here) the same files land, and a member the filter would refuse is refused by name."""

import io
import stat
import tarfile

import pytest

from t2t_repro.data.text_files import DataError, extract_all

FILES = {"corpus/train.en": b"a b c\n", "corpus/dev/dev.en": b"d e\n"}


def tarball(path, extra: tarfile.TarInfo | None = None) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o4777  # setuid, group/other write: cleared
            tar.addfile(info, io.BytesIO(data))
        if extra is not None:
            tar.addfile(extra, io.BytesIO(b"x" * extra.size) if extra.isfile() else None)
    return str(path)


@pytest.fixture(params=["with filters", "without filters"])
def python(request, monkeypatch):
    if request.param == "without filters":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return request.param


def test_the_files_land_with_safe_modes(tmp_path, python):
    extract_all(tarball(tmp_path / "c.tgz"), str(tmp_path / "out"))
    for name, data in FILES.items():
        path = tmp_path / "out" / name
        assert path.read_bytes() == data
        mode = stat.S_IMODE(path.stat().st_mode)
        assert not mode & (stat.S_ISUID | stat.S_IWGRP | stat.S_IWOTH), oct(mode)


def _outside() -> tarfile.TarInfo:
    info = tarfile.TarInfo("../escaped.txt")
    info.size = 1
    return info


def _link_out() -> tarfile.TarInfo:
    info = tarfile.TarInfo("corpus/passwd")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return info


def _device() -> tarfile.TarInfo:
    info = tarfile.TarInfo("corpus/fifo")
    info.type = tarfile.FIFOTYPE
    return info


@pytest.mark.parametrize("member", [_outside, _link_out, _device], ids=["outside", "link", "fifo"])
def test_what_the_data_filter_refuses_is_refused(tmp_path, python, member):
    archive = tarball(tmp_path / "bad.tgz", member())
    with pytest.raises(DataError) as error:
        extract_all(archive, str(tmp_path / "out"))
    assert "bad.tgz" in str(error.value)
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out" / "corpus" / "passwd").exists()
    if python == "without filters":  # nothing written before the refusal, which names it
        assert member().name in str(error.value) and not (tmp_path / "out").exists()
