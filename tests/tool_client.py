"""``python`` for the suite's tool runs, without paying TensorFlow's import each time.

``[sys.executable, "-S", this file, <python args>]`` behaves as ``python <python args>``
(``-m module ...``, ``-c code ...`` or ``script ...``, after an optional ``-u``): same
stdin/stdout/stderr, environment, working directory, exit code, death by signal, and signals
sent to it reach the program.
The program runs in a child forked from a server (``tests/tool_server.py``) that imported
TensorFlow and the project once, so a run starts in ~0.2 s instead of ~4 s.

A real interpreter runs the program instead (``exec``) when the suite's servers are not set up
(no ``T2T_REPRO_TEST_TOOL_SERVERS``) or when the start-up itself is under test: no
``TF_CPP_MIN_LOG_LEVEL`` (a user's environment, ``tests/tools.py``'s ``USER_ENV``) or
``T2T_VERBOSE`` set; and when the server could not fork (a process or memory limit: it says
why in its log and serves on). Environment variables read while importing (TensorFlow's,
Python's, Keras', the locale) pick the server: one server per distinct set of them.

``--test-process`` first: the program is one of the suite's test processes (pytest-xdist
starts them so: tests/conftest.py). Its server starts with it, not from the second run on,
and its CPU is not logged as a tool run's (the test process logs each of its tests').

Only the standard library, imported lazily: this process lives as long as the program.
"""

import os
import sys

SERVERS_ENV = "T2T_REPRO_TEST_TOOL_SERVERS"  # the directory of this test process's servers
OWNER_ENV = "T2T_REPRO_TEST_TOOL_SERVERS_OWNER"  # the pid the servers live no longer than
CPU_LOG_ENV = "T2T_REPRO_TEST_CPU_LOG"  # set by bench/bench_suite.py: each run's CPU goes there
# Read after start-up (by the program, in the child), so they may differ between runs of one
# server. Everything else a prefix below names is read at import and picks the server (the
# project's own T2T_* variables are read at run time; T2T_VERBOSE runs a real interpreter).
# XLA_FLAGS: XLA parses it at its first compile, which no server makes (a child's --xla_dump_to
# dumps its compiles: tests/test_xla_padded_training.py).
_AFTER_START = {
    "TF_CONFIG",
    "PYTHONUNBUFFERED",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "XLA_FLAGS",
}
_AT_IMPORT = ("TF_", "XLA_", "KERAS", "PYTHON", "CUDA", "OMP_", "MKL", "OPENBLAS", "LD_")
_AT_IMPORT_NAMES = {"HOME", "LANG", "LC_ALL", "LC_CTYPE"}
# Forwarded to the program; SIGKILL cannot be, so the server kills the program when this dies.
# The server holds them from its fork until the program runs (tests/tool_server.py).
FORWARDED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
TEST_PROCESS = "--test-process"
# Set by a test for a run that checks plumbing, not T2T's numbers: the program runs without
# Grappler's graph rewrites (tests/grappler.py says why). Only a forked run can have it (the
# server turns Grappler off before the program's first op: tests/tool_server.py), so such a
# run is forked even as the first in its environment: a real interpreter would run with
# Grappler, and two runs a test compares bit for bit would differ (~1e-7 in Adam's moments).
GRAPPLER_OFF_ENV = "T2T_REPRO_TEST_GRAPPLER_OFF"


def import_signature(environ) -> dict:
    """The environment variables a server's imports read (they must match the run's)."""
    return {
        k: v
        for k, v in environ.items()
        if k not in _AFTER_START
        and k not in (SERVERS_ENV, OWNER_ENV, CPU_LOG_ENV)
        and (k in _AT_IMPORT_NAMES or k.startswith(_AT_IMPORT))
    }


def startup_under_test(environ) -> bool:
    return "TF_CPP_MIN_LOG_LEVEL" not in environ or environ.get("T2T_VERBOSE", "") not in ("", "0")


def _exec_python(args: list) -> None:
    os.execv(sys.executable, [sys.executable, *args])


def _server_path(directory: str) -> str:
    import hashlib
    import json

    key = json.dumps(import_signature(os.environ), sort_keys=True).encode()
    return os.path.join(directory, hashlib.sha256(key).hexdigest()[:16])


def _connect(path: str):
    import socket

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path + ".sock")
        return conn
    except OSError:
        conn.close()
        return None


def _start_server(path: str, even_first_run: bool = False):
    """Starts the server for this environment (once: a lock file orders racing clients). Not
    for the first run in an environment (unless ``even_first_run``: the suite's test
    processes, three at once, and a run without Grappler): a server costs more than one real
    start, so it only pays from the second run on (None: this run starts a real interpreter)."""
    import fcntl
    import subprocess
    import time

    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(path)
        if conn is not None:
            return conn
        if not even_first_run and not os.path.exists(path + ".seen"):
            open(path + ".seen", "w").close()
            return None
        env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "PYTHONUNBUFFERED")}
        server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_server.py")
        with open(path + ".log", "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, server, path + ".sock"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # a test's signal to its own group never reaches it
            )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            conn = _connect(path)
            if conn is not None:
                return conn
            time.sleep(0.05)
        return None


def _relay(conn, args: list, unbuffered: bool, log_cpu: bool) -> None:
    """Runs ``args`` in a child of the server and ends this process as the child ended."""
    import json
    import signal
    import socket

    forwarder = _Forwarder({getattr(signal, name) for name in FORWARDED_SIGNALS})
    # Before the request: the program may start and say it is ready (a test then signals
    # this process) before this process runs again; a signal not yet forwarded waits here.
    forwarder.install()
    request = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ), "unbuffered": unbuffered}
    payload = json.dumps(request).encode()
    data = len(payload).to_bytes(8, "big") + payload
    sent = socket.send_fds(conn, [data], [0, 1, 2])  # a signal can cut it short
    if sent < len(data):  # not when all went: a server that could not fork may have closed the
        conn.sendall(data[sent:])  # connection already, and even an empty send is then EPIPE
    lines = _Lines(conn, forwarder)
    line = lines.next()
    if not line:
        sys.stderr.write("tests/tool_client.py: the tool server closed the connection\n")
        os._exit(70)
    started = json.loads(line)
    if "fork_failed" in started:  # the server could not fork (it says why in its log)
        conn.close()
        _exec_after_a_failed_fork(["-u", *args] if unbuffered else args, forwarder)
    forwarder.start(started["pid"])
    line = lines.next()
    if line:
        end = json.loads(line)
    else:  # the server died while the program ran
        sys.stderr.write("tests/tool_client.py: the tool server closed the connection mid-run\n")
        end = {"exit": 70}
    if log_cpu and os.environ.get(CPU_LOG_ENV) and "cpu_s" in end:
        _log_cpu(os.environ[CPU_LOG_ENV], end["cpu_s"], end.get("maxrss_kib", 0))
    if "signal" in end:  # dies by it too (handled or ignored here: SIGPIPE, SIGXFSZ)
        try:
            signal.signal(end["signal"], signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: not to be caught anyway
            pass
        os.kill(os.getpid(), end["signal"])
        os._exit(128 + end["signal"])  # a signal whose default is not to end (SIGCHLD, ...)
    os._exit(end["exit"])


def _exec_after_a_failed_fork(args: list, forwarder: "_Forwarder") -> None:
    """The program in a real interpreter, as if the server were not there; a forwarded signal
    taken while the server tried ends this process by it, as it would have ended the program
    at its start."""
    import signal

    for signum in forwarder.signals:  # from here on a signal ends this process, as a real start
        signal.signal(signum, signal.SIG_DFL)
    forwarder.received_so_far()
    for signum in forwarder.pending[:1]:
        os.kill(os.getpid(), signum)
    _exec_python(args)


class _Forwarder:
    """Sends the program each forwarded signal this process gets (held until its pid is known).

    The signals come as bytes on a pipe (the interpreter's wakeup fd), read where this process
    waits (``_Lines``), not through Python handlers: a handler runs only between bytecodes, so
    one for a signal that came just before a blocking ``recv`` waited for the program's end,
    which the signal was to cause (tests/test_tool_server.py makes it happen)."""

    def __init__(self, signals: set):
        self.signals = signals
        self.child = None
        self.pending = []
        self.wake = None

    def install(self) -> None:
        import signal

        self.wake, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        for signum in self.signals:
            signal.signal(signum, _caught)

    def received_so_far(self) -> None:
        """Takes what the pipe holds now, without waiting."""
        import select

        if select.select([self.wake], [], [], 0)[0]:
            self.received()

    def received(self) -> None:
        for signum in os.read(self.wake, 512):
            if signum not in self.signals:
                continue
            if self.child is None:
                self.pending.append(signum)
            else:
                self._send(signum)

    def start(self, child: int) -> None:
        self.child = child
        for signum in self.pending:
            self._send(signum)

    def _send(self, signum: int) -> None:
        try:
            os.kill(self.child, signum)
        except ProcessLookupError:  # it ended already: its end line follows
            pass


def _caught(_signum, _frame) -> None:
    """A forwarded signal's Python handler: it only keeps the signal from ending this process;
    the byte the interpreter writes to the wakeup pipe is what forwards it."""


class _Lines:
    """The server's lines, read as the forwarder's signals come."""

    def __init__(self, conn, forwarder: _Forwarder):
        self.conn = conn
        self.forwarder = forwarder
        self.buffer = b""

    def next(self) -> str:
        """The next line ("" when the server closed the connection first)."""
        import select

        while b"\n" not in self.buffer:
            readable, _, _ = select.select([self.conn, self.forwarder.wake], [], [])
            if self.forwarder.wake in readable:
                self.forwarder.received()
            if self.conn in readable:
                try:
                    more = self.conn.recv(4096)
                except OSError:  # reset: the server died
                    more = b""
                if not more:
                    return ""
                self.buffer += more
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode() + "\n"


def _log_cpu(path: str, cpu_s: float, maxrss_kib: int) -> None:
    """The forked run's CPU seconds and peak resident KiB, for the test process that started
    this client (its pid: tests/conftest.py logs each test's pid and time span in the same
    file)."""
    import json
    import time

    line = json.dumps(
        {"client_of": os.getppid(), "end": time.time(), "cpu_s": cpu_s, "maxrss_kib": maxrss_kib}
    )
    with open(path, "a") as f:
        f.write(line + "\n")


def main(args: list) -> None:
    test_process = args[:1] == [TEST_PROCESS]
    args = args[1:] if test_process else args
    unbuffered = args[:1] == ["-u"]  # python -u: the program's stdout and stderr unbuffered
    program = args[1:] if unbuffered else args
    directory = os.environ.get(SERVERS_ENV)
    runnable = program and (
        program[0] in ("-m", "-c") and len(program) > 1 or not program[0].startswith("-")
    )
    if not runnable or not directory or not os.path.isdir(directory):
        _exec_python(args)
    if startup_under_test(os.environ):
        _exec_python(args)
    path = _server_path(directory)
    always_forked = test_process or bool(os.environ.get(GRAPPLER_OFF_ENV))
    conn = _connect(path) or _start_server(path, even_first_run=always_forked)
    if conn is None:
        _exec_python(args)
    _relay(conn, program, unbuffered, log_cpu=not test_process)


if __name__ == "__main__":
    main(sys.argv[1:])
