"""A file server on 127.0.0.1 for the download tests, started in a thread, with the ways real
servers fail: a cut transfer, a stalled one, a slow one, Range ignored, 503 then success, 404,
and Google Drive's confirm page. Every request is recorded (path, Range header) for the tests
to check (and its User-Agent). It also serves the corpus of the download usr_dir's T2T reference
(tools/t2t_reference/make_t2t_download_reference.py)."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator

DRIVE_TOKEN = "Tk3n_x"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        srv = self.server
        path, _, query = self.path.partition("?")
        range_header = self.headers.get("Range")
        srv.requests.append((self.path, range_header))
        srv.user_agents.append(self.headers.get("User-Agent"))
        kind = path.strip("/").split("/")[0]
        name = query.split("id=")[-1].split("&")[0] if kind == "drive" else path.split("/")[-1]
        payload = srv.files if isinstance(srv.files, bytes) else srv.files.get(name)
        if kind == "missing" or payload is None:
            return self._send(404, b"not here")
        if kind == "flaky" and sum(p.startswith("/flaky") for p, _ in srv.requests) == 1:
            return self._send(503, b"busy")
        if kind in ("drive", "driveform"):
            return self._drive(query, payload, form=kind == "driveform")
        if kind == "norange" or range_header is None:
            start = 0
        else:
            start = int(range_header.split("=")[1].split("-")[0])
        body = payload[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(payload) - 1}/{len(payload)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if kind == "cut" and sum(p.startswith("/cut") for p, _ in srv.requests) == 1:
            self.wfile.write(body[: len(body) // 2])  # then the connection drops
            self.wfile.flush()
            self.close_connection = True
            return
        if kind == "stall" and sum(p.startswith("/stall") for p, _ in srv.requests) == 1:
            self.wfile.write(body[:1000])  # then nothing until the client gives up and closes
            self.wfile.flush()
            # Not a sleep of a fixed length: a client held up longer (a loaded host) would see
            # the close first, a cut transfer, not a stall. 30 s at most.
            self.connection.settimeout(30)
            with contextlib.suppress(OSError):
                self.rfile.read()
            self.close_connection = True
            return
        if kind == "slow":
            for i in range(0, len(body), srv.slow_chunk):
                self.wfile.write(body[i : i + srv.slow_chunk])
                self.wfile.flush()
                time.sleep(srv.slow_pause)
            return
        self.wfile.write(body)

    def _drive(self, query: str, payload: bytes, form: bool) -> None:
        """Drive's large-file answer: a warning page setting ``download_warning_<id>`` (T2T's
        days), or, ``form``, a page whose form carries the token (Drive's newer page), then
        the file for a request carrying ``confirm=<token>`` (and the cookie)."""
        cookie_ok = form or DRIVE_TOKEN in self.headers.get("Cookie", "")
        if f"confirm={DRIVE_TOKEN}" in query and cookie_ok:
            return self._send(200, payload, {"Content-Type": "application/octet-stream"})
        page = b"<html><body>Google Drive can't scan this file for viruses."
        if form:
            page += f'<form><input type="hidden" name="confirm" value="{DRIVE_TOKEN}">'.encode()
            return self._send(200, page + b"</form></body></html>", {"Content-Type": "text/html"})
        cookie = f"download_warning_13058876669334088843_abc={DRIVE_TOKEN}; Path=/"
        self._send(
            200, page + b"</body></html>", {"Content-Type": "text/html", "Set-Cookie": cookie}
        )


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, files: bytes | dict[str, bytes]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = files
        self.requests: list[tuple[str, str | None]] = []
        self.user_agents: list[str | None] = []  # each request's, in order
        self.slow_chunk, self.slow_pause = 2048, 0.03

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextlib.contextmanager
def serving(files: bytes | dict[str, bytes]) -> Iterator[_Server]:
    """A server until the block ends: ``/<kind>/<name>`` (and ``/drive/...?id=<name>``) is
    ``files[name]`` (404 when absent), or ``files`` itself under every name."""
    server = _Server(files)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
