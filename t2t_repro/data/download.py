"""The one way raw data is downloaded: T2T's ``generator_utils.maybe_download`` and
``maybe_download_from_drive`` (and every problem of this project) fetch files through here.

What a user can count on:

* a file already at its final name is used as it is, never fetched again (T2T's rule);
* the transfer is streamed into ``<file>.incomplete`` (T2T's in-progress name) and renamed
  when complete, so a file under its final name is always whole;
* an interrupted transfer resumes from ``<file>.incomplete`` (HTTP ``Range``), in this run
  after a dropped connection and in the next run after a kill; a server that ignores the
  range (answering 200) restarts the file from its first byte;
* transient failures (HTTP 5xx and 429, a reset connection, a timeout) are retried with
  growing pauses; each request has a timeout;
* a 404, a refused or absent network, or ``T2T_REPRO_OFFLINE=1`` (``t2t-datagen --offline``)
  end in one line naming the URL and the file to put in ``--tmp_dir`` instead;
* a progress line (size, rate, ETA) on stderr, as datagen's.

requests does the transfer (TensorFlow installs it; T2T's ``maybe_download_from_drive`` uses
it): sessions carry Google Drive's confirm cookie, redirects and proxies are handled, and
dropped connections surface as typed exceptions.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import time
from collections.abc import Iterator

import requests
import urllib3

from t2t_repro import fileio
from t2t_repro.data.datagen_lib import Progress
from t2t_repro.errors import DataError

OFFLINE_ENV = "T2T_REPRO_OFFLINE"
INCOMPLETE_SUFFIX = ".incomplete"  # T2T's maybe_download names its in-progress file so
CHUNK_BYTES = 1 << 16
TIMEOUT_S = 60.0
RETRIES = 5
BACKOFF_S = 1.0
PROGRESS_EVERY_S: float | None = None  # None: datagen's (1 s on a terminal, else 15 s)
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_TRANSIENT_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)


class DownloadError(DataError):
    """A file could not be downloaded; the message names the URL and where to put the file."""


def offline() -> bool:
    """``T2T_REPRO_OFFLINE`` set to 1/true/yes: nothing is downloaded."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes")


_progress_shown = True  # t2t-datagen --noprogress turns it off for its run (``settings``)


@contextlib.contextmanager
def settings(offline: bool = False, progress: bool = True) -> Iterator[None]:
    """A command's ``--offline`` (``T2T_REPRO_OFFLINE=1``) and ``--noprogress`` for the block."""
    global _progress_shown
    saved_env, saved_progress = os.environ.get(OFFLINE_ENV), _progress_shown
    if offline:
        os.environ[OFFLINE_ENV] = "1"
    _progress_shown = progress
    try:
        yield
    finally:
        _progress_shown = saved_progress
        if offline and saved_env is None:
            del os.environ[OFFLINE_ENV]
        elif offline:
            os.environ[OFFLINE_ENV] = saved_env


def put_it_there(url: str, path: str) -> str:
    """The advice every refusal ends with."""
    return (
        f"download {url} yourself and put it at {path} (the file {os.path.basename(path)} in "
        f"--tmp_dir {os.path.dirname(path) or '.'}), then run again."
    )


def human_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000.0
    return f"{n:,.1f} GB"


def is_web_url(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def _fail(url: str, path: str, why: str) -> DownloadError:
    return DownloadError(f"could not download {url} ({why}): {put_it_there(url, path)}")


def _total_size(response: requests.Response, start: int) -> int | None:
    """The whole file's size: from ``Content-Range: bytes a-b/N`` (a 206), else start plus
    ``Content-Length`` (unknown: None)."""
    match = re.match(r"bytes \d+-\d+/(\d+)", response.headers.get("Content-Range", ""))
    if match:
        return int(match.group(1))
    length = response.headers.get("Content-Length")
    return start + int(length) if length and length.isdigit() else None


def _range_start(response: requests.Response) -> int | None:
    match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    return int(match.group(1)) if match else None


@contextlib.contextmanager
def _locked_partial(partial: str, url: str, path: str) -> Iterator:
    """``partial`` opened for appending, locked so that two processes never write it at once."""
    with open(partial, "ab") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DownloadError(
                f"{partial} is being written by another process (downloading {url}); wait for "
                f"it to finish, or stop it and run again, or {put_it_there(url, path)}"
            ) from None
        yield f


class _Transient(Exception):
    """A failure worth another attempt."""


def _attempt(session, url: str, path: str, out, timeout: float, progress: bool) -> bool:
    """One request continuing ``out`` (the partial file, opened for appending); True when the
    file is complete. Raises ``_Transient`` for what another attempt may fix."""
    have = out.seek(0, os.SEEK_END)
    headers = {"Accept-Encoding": "identity"}  # the file's bytes, as stored, so ranges add up
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = session.get(url, headers=headers, stream=True, timeout=timeout)
    except (
        requests.exceptions.InvalidURL,
        requests.exceptions.MissingSchema,
        requests.exceptions.InvalidSchema,
    ) as e:
        raise _fail(url, path, f"not a valid URL: {e}") from None
    with response:
        status = response.status_code
        if status == 416 and have:  # asked past the end: complete if the sizes agree
            size = re.match(r"bytes \*/(\d+)", response.headers.get("Content-Range", ""))
            if size and int(size.group(1)) == have:
                return True
            out.truncate(0)
            raise _Transient(f"HTTP 416 for a range from byte {have}; restarting")
        if status in TRANSIENT_STATUS:
            raise _Transient(f"HTTP {status} {response.reason}")
        if status >= 400:
            raise _fail(url, path, f"HTTP {status} {response.reason}")
        if status == 206 and _range_start(response) != have:
            out.truncate(0)
            raise _Transient("the server sent another range than asked; restarting")
        if status != 206 and have:  # the server ignored Range: the whole file again
            out.truncate(0)
            have = 0
        total = _total_size(response, have)
        name = os.path.basename(path)
        bar = Progress(name, total, None, progress, "", human_bytes, have)
        bar.interval = bar.interval if PROGRESS_EVERY_S is None else PROGRESS_EVERY_S
        while True:
            try:  # read1: what has arrived (up to CHUNK_BYTES), so a slow line shows progress
                chunk = response.raw.read1(CHUNK_BYTES, decode_content=False)
            except _TRANSIENT_ERRORS + (urllib3.exceptions.HTTPError, OSError) as e:
                out.flush()
                raise _Transient(f"transfer cut after {human_bytes(bar.done)}: {e}") from None
            if not chunk:
                break
            out.write(chunk)  # a full disk is no transient error: it ends the run
            bar.update(bar.done + len(chunk))
        out.flush()
        if total is not None and bar.done < total:
            raise _Transient(f"transfer cut at {human_bytes(bar.done)} of {human_bytes(total)}")
        bar.close()
        return True


def fetch(
    url: str,
    path: str,
    *,
    session: requests.Session | None = None,
    progress: bool | None = None,
    timeout: float = TIMEOUT_S,
    retries: int = RETRIES,
    backoff: float = BACKOFF_S,
) -> str:
    """``url`` to the local file ``path``; kept when ``path`` exists. Returns ``path``.
    ``progress`` None: shown unless the command said ``--noprogress``."""
    progress = _progress_shown if progress is None else progress
    if os.path.exists(path):
        return path
    if fileio.is_url(path):
        raise DataError(f"{path}: downloads go to a local --tmp_dir; {put_it_there(url, path)}")
    if offline():
        raise DownloadError(
            f"{OFFLINE_ENV} is set, so nothing is downloaded: {put_it_there(url, path)}"
        )
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + INCOMPLETE_SUFFIX
    session = session or requests.Session()
    try:
        with _locked_partial(partial, url, path) as out:
            if os.path.exists(path):  # another process finished it while this one waited
                return path
            _transfer(session, url, path, out, timeout, progress, retries, backoff)
            os.fsync(out.fileno())
            os.replace(partial, path)
    finally:  # nothing to resume from: no empty leftover
        with contextlib.suppress(OSError):
            if os.path.getsize(partial) == 0:
                os.remove(partial)
    return path


def _transfer(session, url, path, out, timeout, progress, retries, backoff) -> None:
    """Attempts until the file is complete, or one line when retrying cannot help."""
    failures, why = 0, ""
    while True:
        before = out.seek(0, os.SEEK_END)
        try:
            if _attempt(session, url, path, out, timeout, progress):
                break
        except _Transient as e:
            why = str(e)
        except _TRANSIENT_ERRORS as e:
            why = _network_reason(e)
            if why in _NO_NETWORK:  # no route to the host: retrying will not help
                raise _fail(url, path, f"no network: {why}") from None
        # A failure after progress starts the count again: a long file over a flaky line
        # resumes as often as it moves forward.
        failures = 1 if out.seek(0, os.SEEK_END) > before else failures + 1
        if failures > retries:
            raise _fail(url, path, f"{why}; gave up after {retries} retries") from None
        pause = backoff * 2 ** (failures - 1)
        print(f"{os.path.basename(path)}: {why}; retrying in {pause:.1f}s", file=sys.stderr)
        time.sleep(pause)


_NO_NETWORK = (
    "name or service not known",
    "temporary failure in name resolution",
    "no address associated with hostname",
    "network is unreachable",
)


def _network_reason(error: Exception) -> str:
    """A short reason for a requests exception (its message can be a page of nested reprs)."""
    text = str(error)
    for hint in _NO_NETWORK + ("connection refused", "timed out", "connection reset"):
        if hint in text.lower():
            return hint
    return f"{type(error).__name__}: {text[:160]}"


_DRIVE_FORM_TOKEN = re.compile(
    rb'name="confirm"\s+value="([0-9A-Za-z_-]+)"|confirm=([0-9A-Za-z_-]+)'
)


def fetch_from_drive(url: str, path: str, **kwargs) -> str:
    """T2T's ``maybe_download_from_drive``: Google Drive answers a large file with a virus-scan
    warning page and a ``download_warning*`` cookie; its value is appended to the URL as
    ``&confirm=<token>`` and the file fetched with the same session (cookies kept). A page
    carrying the token in its form (Drive's newer page) gives it as well."""
    if os.path.exists(path):
        return path
    if offline():
        return fetch(url, path, **kwargs)  # the one line of the offline switch
    if not is_web_url(url):
        raise _fail(url, path, "not an http(s) URL")
    session = kwargs.pop("session", None) or requests.Session()
    token = None
    try:
        with session.get(url, stream=True, timeout=kwargs.get("timeout", TIMEOUT_S)) as first:
            for name, value in first.cookies.items():
                if name.startswith("download_warning"):
                    token = value
            if token is None and "text/html" in first.headers.get("Content-Type", ""):
                found = _DRIVE_FORM_TOKEN.search(first.content[: 1 << 20])
                token = found and (found.group(1) or found.group(2)).decode()
    except _TRANSIENT_ERRORS as e:
        raise _fail(url, path, _network_reason(e)) from None
    if token:
        url = f"{url}&confirm={token}"
    return fetch(url, path, session=session, **kwargs)
