"""Downloads (``t2t_repro/data/download.py`` and T2T's ``generator_utils.maybe_download`` /
``maybe_download_from_drive``) against a loopback server (``tests/loopback_http.py``): each
ends with the right file or one line, and never leaves a partial file under the final name."""

import fcntl
import os
import re
import socket

import pytest
import requests

from t2t_repro.data import download
from t2t_repro.data.download import DownloadError
from t2t_repro.t2t_compat import generator_utils
from tests.loopback_http import serving

PAYLOAD = bytes(range(256)) * 64  # 16 kB, every byte value
FAST = {"progress": False, "timeout": 5.0, "retries": 2, "backoff": 0.01}


@pytest.fixture(autouse=True)
def online(monkeypatch):
    monkeypatch.delenv(download.OFFLINE_ENV, raising=False)


def _leftovers(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith((".incomplete", ".tmp")))


def test_a_complete_transfer_and_a_file_already_there(tmp_path):
    dest = tmp_path / "corpus.tgz"
    with serving(PAYLOAD) as server:
        assert download.fetch(f"{server.url}/full/corpus.tgz", str(dest), **FAST) == str(dest)
        assert dest.read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
        # T2T's maybe_download: a file already in --tmp_dir is used, never fetched again.
        dest.write_bytes(b"mine")
        got = generator_utils.maybe_download(str(tmp_path), "corpus.tgz", f"{server.url}/full/x")
        assert got == str(dest) and dest.read_bytes() == b"mine"
        assert len(server.requests) == 1


def test_a_slow_transfer_shows_size_rate_and_eta(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(download, "PROGRESS_EVERY_S", 0.0)
    dest = tmp_path / "train.en.gz"
    with serving(PAYLOAD) as server:
        download.fetch(f"{server.url}/slow/train.en.gz", str(dest), timeout=5.0)
    assert dest.read_bytes() == PAYLOAD
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3, lines  # several updates while the chunks arrive, then the last
    assert all(line.startswith("train.en.gz: ") for line in lines), lines
    assert all(re.search(r"/16.4 kB \(\d+%\), [\d.,]+ [kMG]?B/s, ETA \d+s", x) for x in lines)
    assert lines[-1].startswith("train.en.gz: 16.4 kB/16.4 kB (100%)") and "done in" in lines[-1]
    with serving(PAYLOAD) as server, download.settings(progress=False):  # --noprogress
        download.fetch(f"{server.url}/slow/b.gz", str(tmp_path / "b.gz"), timeout=5.0)
    assert capsys.readouterr().err == "" and (tmp_path / "b.gz").read_bytes() == PAYLOAD


def test_a_cut_transfer_resumes_with_range(tmp_path, capsys):
    dest = tmp_path / "cut.tgz"
    with serving(PAYLOAD) as server:
        download.fetch(f"{server.url}/cut/cut.tgz", str(dest), **FAST)
    assert dest.read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
    half = len(PAYLOAD) // 2
    assert server.requests == [("/cut/cut.tgz", None), ("/cut/cut.tgz", f"bytes={half}-")]
    assert "transfer cut" in capsys.readouterr().err


def test_a_killed_download_resumes_from_its_incomplete_file(tmp_path):
    """A run killed mid-transfer leaves ``<file>.incomplete`` (never the final name); the next
    run asks only for the rest."""
    dest = tmp_path / "corpus.tgz"
    (tmp_path / "corpus.tgz.incomplete").write_bytes(PAYLOAD[:5000])
    with serving(PAYLOAD) as server:
        generator_utils.maybe_download(str(tmp_path), "corpus.tgz", f"{server.url}/full/c.tgz")
    assert dest.read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
    assert server.requests == [("/full/c.tgz", "bytes=5000-")]


def test_a_server_ignoring_range_restarts_the_file(tmp_path):
    dest = tmp_path / "data.bin"
    (tmp_path / "data.bin.incomplete").write_bytes(b"x" * 3000)  # not even the right bytes
    with serving(PAYLOAD) as server:
        download.fetch(f"{server.url}/norange/data.bin", str(dest), **FAST)
    assert dest.read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
    assert server.requests == [("/norange/data.bin", "bytes=3000-")]  # answered 200: whole


def test_transient_errors_are_retried(tmp_path, capsys):
    dest = tmp_path / "f.txt"
    with serving(PAYLOAD) as server:
        download.fetch(f"{server.url}/flaky/f.txt", str(dest), **FAST)
    assert dest.read_bytes() == PAYLOAD and len(server.requests) == 2
    assert "HTTP 503" in capsys.readouterr().err


def test_a_stalled_transfer_times_out_and_resumes(tmp_path, capsys):
    dest = tmp_path / "s.tgz"
    with serving(PAYLOAD) as server:
        # The server stalls until the client's read times out (tests/loopback_http.py); 1 s,
        # not less, so that no other read of a loaded host's test times out first.
        download.fetch(f"{server.url}/stall/s.tgz", str(dest), **dict(FAST, timeout=1.0))
    assert dest.read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
    assert server.requests == [("/stall/s.tgz", None), ("/stall/s.tgz", "bytes=1000-")]
    assert "timed out" in capsys.readouterr().err


def test_a_404_is_one_line_naming_the_url_and_the_file(tmp_path):
    with serving(PAYLOAD) as server, pytest.raises(DownloadError) as e:
        download.fetch(f"{server.url}/missing/a.tgz", str(tmp_path / "a.tgz"), **FAST)
    message = str(e.value)
    assert "\n" not in message and "HTTP 404" in message, message
    assert f"{server.url}/missing/a.tgz" in message and str(tmp_path / "a.tgz") in message
    assert f"--tmp_dir {tmp_path}" in message and os.listdir(tmp_path) == []
    assert len(server.requests) == 1  # a 404 is not retried


def test_no_network_is_one_line(tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError) as e:
        download.fetch(f"http://127.0.0.1:{port}/x.tgz", str(tmp_path / "x.tgz"), **FAST)
    message = str(e.value)
    assert "\n" not in message and "connection refused" in message, message
    assert f"put it at {tmp_path / 'x.tgz'}" in message and os.listdir(tmp_path) == []


def test_a_host_that_does_not_resolve_is_one_line_at_once(tmp_path):
    """No network (name resolution fails): no retries, one line. A stand-in session raises what
    requests raises then, so no resolver is asked."""

    class NoDns:
        calls = 0

        def get(self, url, **kwargs):
            NoDns.calls += 1
            reason = "[Errno -3] Temporary failure in name resolution"
            raise requests.ConnectionError(f"HTTPSConnectionPool(host='x.org'): {reason}")

    with pytest.raises(DownloadError) as e:
        download.fetch("https://x.org/a.tgz", str(tmp_path / "a.tgz"), session=NoDns(), **FAST)
    message = str(e.value)
    assert message.startswith("could not download https://x.org/a.tgz (no network: temporary")
    assert "\n" not in message and NoDns.calls == 1 and os.listdir(tmp_path) == []


def test_google_drive_confirm_step(tmp_path):
    """T2T's maybe_download_from_drive: the warning page's ``download_warning*`` cookie value
    is appended as ``&confirm=`` and the file fetched with the same cookies."""
    with serving(PAYLOAD) as server:
        url = f"{server.url}/drive/uc?export=download&id=abc"
        got = generator_utils.maybe_download_from_drive(str(tmp_path), "data.zip", url)
        assert got == str(tmp_path / "data.zip")
        assert (tmp_path / "data.zip").read_bytes() == PAYLOAD and _leftovers(tmp_path) == []
        paths = [p for p, _ in server.requests]
        assert paths == [
            "/drive/uc?export=download&id=abc",
            "/drive/uc?export=download&id=abc&confirm=Tk3n_x",
        ]
        # There already: returned as it is (T2T's), no request.
        generator_utils.maybe_download_from_drive(str(tmp_path), "data.zip", url)
        assert len(server.requests) == 2


def test_google_drive_newer_confirm_form(tmp_path):
    with serving(PAYLOAD) as server:
        url = f"{server.url}/driveform/uc?export=download&id=abc"
        generator_utils.maybe_download_from_drive(str(tmp_path), "data.zip", url)
    assert (tmp_path / "data.zip").read_bytes() == PAYLOAD
    assert server.requests[-1][0].endswith("&confirm=Tk3n_x")


def test_a_file_another_process_is_downloading_is_one_line(tmp_path):
    partial = tmp_path / "big.tgz.incomplete"
    with open(partial, "ab") as held, serving(PAYLOAD) as server:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(DownloadError, match=r"being written by another process") as e:
            download.fetch(f"{server.url}/full/big.tgz", str(tmp_path / "big.tgz"), **FAST)
    assert "\n" not in str(e.value) and server.requests == []
    assert not (tmp_path / "big.tgz").exists()


def test_the_offline_switch_never_touches_the_network(tmp_path, monkeypatch):
    monkeypatch.setenv(download.OFFLINE_ENV, "1")
    with serving(PAYLOAD) as server:
        for call in (generator_utils.maybe_download, generator_utils.maybe_download_from_drive):
            with pytest.raises(DownloadError) as e:
                call(str(tmp_path), "c.tgz", f"{server.url}/full/c.tgz")
            message = str(e.value)
            assert "\n" not in message and "T2T_REPRO_OFFLINE is set" in message, message
            assert f"{server.url}/full/c.tgz" in message and str(tmp_path / "c.tgz") in message
        assert server.requests == [] and os.listdir(tmp_path) == []
        (tmp_path / "c.tgz").write_bytes(b"here")  # a file in --tmp_dir is used offline too
        assert generator_utils.maybe_download(str(tmp_path), "c.tgz", server.url + "/c.tgz")


def test_a_local_uri_is_copied_and_a_bad_one_refused(tmp_path):
    """T2T copies a non-http uri with tf.gfile.Copy (a local path, gs://)."""
    source = tmp_path / "elsewhere.txt"
    source.write_bytes(b"abc\n")
    got = generator_utils.maybe_download(str(tmp_path / "t"), "a.txt", str(source))
    assert open(got, "rb").read() == b"abc\n"
    with pytest.raises(Exception, match=r"neither an http\(s\) URL nor a file here"):
        generator_utils.maybe_download(str(tmp_path / "t"), "b.txt", "ftp://x.org/b.txt")
