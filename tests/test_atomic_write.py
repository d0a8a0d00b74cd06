"""The one atomic write: all or nothing at the target, no temp file left behind."""

import pytest

from t2t_repro.atomic_write import (
    atomic_open,
    atomic_path,
    write_bytes_atomically,
    write_text_atomically,
)


def test_writes_text_and_bytes(tmp_path):
    write_text_atomically(str(tmp_path / "a.txt"), "héllo\n")
    write_bytes_atomically(str(tmp_path / "b.bin"), b"\x00\xff")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(str(target)) as f:
            f.write("half of the new")
            assert target.read_text() == "old\n"  # Readers see the old file meanwhile.
            raise RuntimeError("interrupted")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(str(target)) as tmp:
            open(tmp, "w").write("x")
            raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_missing_directory_is_an_error_and_mode_is_checked(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_text_atomically(str(tmp_path / "no" / "x.txt"), "x")
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(str(tmp_path / "x.txt"), "a"):
            pass
