"""The suite's ``python`` (``tests/tools.py``'s ``PYTHON``: a client of a fork server) behaves as
a process of its own: stdio, environment, working directory, arguments, exit codes, uncaught
exceptions, death by signal, signals forwarded, a killed client takes its program along, and
the start-up under test (no TF_CPP_MIN_LOG_LEVEL, T2T_VERBOSE) runs a real interpreter, and so
does a run the server could not fork (it serves on). The
suite's test processes are its children too (tests/conftest.py)."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fresh_process import run_in_fresh_process
from tests.tools import PYTHON, ROOT

PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "x": os.environ.get("PROBE_X"),
                  "forked": "t2t_repro.commands.trainer" in sys.modules}))
sys.stderr.write("to stderr\\n")
sys.exit(int(os.environ.get("PROBE_CODE", "0")))
"""


def run(*args, **kwargs):
    kwargs = {"capture_output": True, "text": True, "timeout": 300, "cwd": ROOT, **kwargs}
    return subprocess.run([*PYTHON, *args], **kwargs)


def test_argv_env_cwd_stdio_and_exit_code(tmp_path):
    import json

    env = dict(os.environ, PROBE_X="1", PROBE_CODE="3", TF_CPP_MIN_LOG_LEVEL="3")
    for _ in range(2):  # a first run in an environment may be a real one, the second is forked
        out = run("-c", PROBE, "a", "b c", cwd=tmp_path, env=env)
        assert out.returncode == 3 and out.stderr.endswith("to stderr\n"), out.stderr
        seen = json.loads(out.stdout)
        assert seen["argv"] == ["-c", "a", "b c"] and seen["cwd"] == str(tmp_path)
        assert seen["x"] == "1"
    assert seen["forked"]


def test_python_u_and_a_test_process_run_that_logs_no_cpu(tmp_path):
    """``-u`` as ``python -u``: the program's stdout writes through. ``--test-process`` (how
    pytest-xdist starts the test processes) runs the program alike, and logs no tool run's CPU
    line: the test process logs its tests' own (a run's line would count them twice)."""
    code = "import sys\nprint(sys.stdout.write_through, 't2t_repro.commands' in sys.modules)"
    log = tmp_path / "cpu.jsonl"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", T2T_REPRO_TEST_CPU_LOG=str(log))
    env.pop("PYTHONUNBUFFERED", None)  # (-u's variable: it would make every run unbuffered)
    for _ in range(2):  # a first run in an environment may be a real one, the second is forked
        out = run("-u", "-c", code, env=env)
    assert out.returncode == 0 and out.stdout == "True True\n", out.stderr
    assert run("-c", code, env=env).stdout == "False True\n"
    logged = log.read_text().count("\n")
    out = run("--test-process", "-u", "-c", code, env=env)
    assert out.returncode == 0 and out.stdout == "True True\n", out.stderr
    assert log.read_text().count("\n") == logged > 0


def test_the_test_processes_are_forked_from_the_tool_server():
    """pytest-xdist's test processes (README's ``make test``) start from the tool server: they
    do not import TensorFlow and the project each (tests/conftest.py)."""
    from tests.conftest import FORKED_TEST_PROCESSES_ENV
    from tests.tool_client import SERVERS_ENV, startup_under_test

    if not os.environ.get(FORKED_TEST_PROCESSES_ENV) or startup_under_test(os.environ):
        pytest.skip("not in a test process of pytest -n, or T2T_VERBOSE set (real starts)")
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        parent = f.read().split(b"\0")
    logs = {p.name: p.read_text()[-2000:] for p in Path(os.environ[SERVERS_ENV]).glob("*.log")}
    assert parent[1].endswith(b"tests/tool_server.py"), (parent, logs)  # logs: why it failed


def test_modules_stdin_and_uncaught_exceptions():
    out = run("-m", "json.tool", input='{"b": 1}')
    assert out.returncode == 0 and out.stdout == '{\n    "b": 1\n}\n'
    out = run("-c", "import tensorflow\nraise ValueError('boom')")
    assert out.returncode == 1 and out.stderr.rstrip().endswith("ValueError: boom")
    out = run("-c", "import sys; sys.exit('bye')")
    assert out.returncode == 1 and out.stderr == "bye\n"


def test_signals_are_forwarded_and_death_by_signal_is_reported():
    # Short sleeps, not one of 60 s: Python runs a handler only between bytecodes, and its
    # time.sleep does not look for a signal that came before the sleep began, so a SIGTERM
    # taken between the print and the sleep ran its handler 60 s late (the program's own race,
    # in any interpreter; a forked program hit it in 5 of 80 loaded runs).
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))\n"
        "print('ready', flush=True)\n"
        "for _ in range(1200):\n"
        "    time.sleep(0.05)\n"
    )
    for _ in range(2):
        proc = subprocess.Popen([*PYTHON, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    out = run("-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert out.returncode == -signal.SIGKILL
    # One that Python ignores (in the client too): the client dies of it all the same.
    code = "import os, signal\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
    out = run("-c", code + "os.kill(os.getpid(), signal.SIGPIPE)")
    assert out.returncode == -signal.SIGPIPE, out.stderr


RACE = """
import json, os, signal, socket, subprocess, sys, threading, time
sys.path.insert(0, sys.argv[1])
import tool_client

program = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
client_end, server_end = socket.socketpair()
forwarder = tool_client._Forwarder({signal.SIGTERM})
forwarder.install()
forwarder.start(program.pid)

def server():
    time.sleep(0.2)  # the main thread waits for a line by then
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # this thread takes it
    server_end.sendall((json.dumps({"returncode": program.wait()}) + "\\n").encode())

threading.Thread(target=server).start()
print(tool_client._Lines(client_end, forwarder).next(), end="")
"""


def test_a_signal_taken_while_the_client_waits_reaches_the_program():
    """The client forwards a signal that its interpreter's Python handler would not see until
    its blocking read returned: here another thread takes the signal, as the main thread
    itself does between the handlers' check and the read (the read then waited for the end of
    the program that the signal was to end)."""
    import json
    import sys

    out = subprocess.run(
        [sys.executable, "-S", "-c", RACE, str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"returncode": -signal.SIGTERM}


def test_a_killed_client_takes_its_program_along(tmp_path):
    code = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n"
    for _ in range(2):
        proc = subprocess.Popen([*PYTHON, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        program = int(proc.stdout.readline())
        started = _start_time(program)
        proc.kill()
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(program, started):
            time.sleep(0.05)
        assert not _alive(program, started)


def test_a_client_killed_before_it_read_the_pid_takes_its_program_along():
    """Under load the program can print before its client has read the server's pid line; a
    client killed then resets its connection (ECONNRESET, not an end of file). The server once
    died of that, leaving the program running (a test saw it outlive its client by 30 s)."""
    import json
    import socket
    import struct

    from tests.tool_client import _connect

    conn = _connect(_this_environments_server())
    server = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
    server_started = _start_time(server)
    _request(conn, "import time\ntime.sleep(120)\n")
    line, deadline = b"", time.monotonic() + 60
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        line = conn.recv(100, socket.MSG_PEEK)  # the pid line, left unread
    program = json.loads(line)["pid"]
    started = _start_time(program)
    conn.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _alive(program, started):
        time.sleep(0.05)
    assert not _alive(program, started)
    assert _alive(server, server_started)  # and the server serves on
    assert subprocess.run([*PYTHON, "-c", "pass"], cwd=ROOT, timeout=300).returncode == 0
    assert _alive(server, server_started)


def test_a_signal_sent_before_the_program_runs_reaches_it():
    """A client forwards a signal it got before it knew the program's pid as soon as it knows
    it, which can be before the forked child runs the program. The child held it till then:
    it once met the server's own SIGTERM handler there (the child stopped the server's other
    runs, unlinked its socket and exited 0) or was dropped (the program ran on)."""
    import json

    from tests.tool_client import _connect

    server = _this_environments_server()
    for _ in range(10):
        conn = _connect(server)
        assert conn is not None, "the server's socket is gone"
        _request(conn, "import time\ntime.sleep(60)\n")
        conn.settimeout(30)
        stream = conn.makefile("r")
        program = json.loads(stream.readline())["pid"]
        os.kill(program, signal.SIGTERM)
        try:
            end = json.loads(stream.readline())
        except TimeoutError:
            os.kill(program, signal.SIGKILL)
            end = {"still running 30 s later": True}
        conn.close()
        assert end.get("signal") == signal.SIGTERM, end


def _this_environments_server() -> str:
    """The path of the tool server of this test process's environment (started here if none
    is: a first run may be a real one)."""
    from tests import tool_client

    for _ in range(2):
        subprocess.run([*PYTHON, "-c", "pass"], cwd=ROOT, check=True, timeout=300)
    return tool_client._server_path(os.environ[tool_client.SERVERS_ENV])


def _request(conn, code: str) -> None:
    """Asks the server to run ``python -c code`` with stdio on /dev/null, as tool_client's
    ``_relay`` asks."""
    import json
    import socket

    request = json.dumps({"args": ["-c", code], "cwd": str(ROOT), "env": dict(os.environ)})
    null = os.open(os.devnull, os.O_RDWR)
    payload = len(request.encode()).to_bytes(8, "big") + request.encode()
    socket.send_fds(conn, [payload], [null, null, null])
    os.close(null)


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (None: no such process)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # gone (also between open and read)
        return None


def _start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None  # field 22 of stat: the start time in clock ticks


def _alive(pid: int, started: str | None) -> bool:
    """Whether the process that started at ``started`` still runs (not a zombie): a busy
    suite wraps the pids around (pid_max 32768 here), so another process may take the pid."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == started


@pytest.mark.parametrize("env_change", [{"T2T_VERBOSE": "1"}, {"TF_CPP_MIN_LOG_LEVEL": None}])
def test_the_start_up_under_test_runs_a_real_interpreter(env_change):
    env = {k: v for k, v in {**os.environ, **env_change}.items() if v is not None}
    out = run("-c", "import sys; print('tensorflow' in sys.modules)", env=env)
    assert out.returncode == 0 and out.stdout == "False\n", out.stderr


def _fails():
    raise ValueError("from the fresh process")


def test_a_fresh_process_failure_fails_the_test():
    with pytest.raises(AssertionError, match="ValueError: from the fresh process"):
        run_in_fresh_process(_fails)


DEVICE_PROBE = """
import json, sys
from tensorflow.python.eager import context
from t2t_repro import console
ctx = context.context()
seen = {"forked": "t2t_repro.commands.trainer" in sys.modules,
        "attributes": hasattr(ctx, "_physical_devices") and hasattr(ctx, "_context_handle"),
        "listed": ctx._physical_devices is not None, "runtime": ctx._context_handle is not None}
console.start_tensorflow()  # what every tool calls first: it discovers the devices now
seen["listed_by_the_tool"] = ctx._physical_devices is not None
print(json.dumps(seen))
"""


def test_the_server_forks_before_any_device_or_runtime_is_set_up():
    """Device discovery initialises each accelerator's runtime (``cuInit`` on a GPU host), and
    CUDA does not survive ``fork``: the server only imports (``console.import_tensorflow``).
    A forked program starts with the server's state, so what it finds is what the server did:
    no device listed and no eager runtime; the tool's own start-up then discovers them."""
    import json

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for _ in range(2):  # a first run in an environment may be a real one, the second is forked
        out = run("-c", DEVICE_PROBE, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout)
    assert seen == {
        "forked": True,
        "attributes": True,  # TensorFlow still keeps the state where this test looks
        "listed": False,
        "runtime": False,
        "listed_by_the_tool": True,
    }


@pytest.mark.parametrize("grappler_off,forked_first", [("1", True), ("", False)])
def test_a_run_without_grappler_is_forked_even_as_the_first_in_its_environment(
    tmp_path, monkeypatch, grappler_off, forked_first
):
    """Only the server's fork turns Grappler off; a first run in a real interpreter ran with
    it, and test_trainer's killed-and-resumed runs then differed (~1e-7) when run alone. The
    client's choice, in this process (a server of its own would import TensorFlow again)."""
    from tests import tool_client

    monkeypatch.setenv(tool_client.SERVERS_ENV, str(tmp_path))  # no server there yet
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    monkeypatch.delenv("T2T_VERBOSE", raising=False)
    monkeypatch.setenv(tool_client.GRAPPLER_OFF_ENV, grappler_off)
    asked = []

    def start_server(path, even_first_run=False):
        asked.append(even_first_run)
        return None  # as for a first run that is not forked: a real interpreter

    def exec_python(args):
        raise SystemExit(f"real interpreter: {args}")

    monkeypatch.setattr(tool_client, "_start_server", start_server)
    monkeypatch.setattr(tool_client, "_exec_python", exec_python)
    with pytest.raises(SystemExit, match="real interpreter"):
        tool_client.main(["-c", "pass"])
    assert asked == [forked_first]


# A server of its own whose first fork fails (as under a process or memory limit), then forks.
FAILING_FORK_SERVER = """
import os, sys
from tests import tool_client, tool_server
real_fork, forks = os.fork, []
def fork_failing_once():
    forks.append(1)
    if len(forks) == 1:
        raise BlockingIOError(11, "Resource temporarily unavailable")
    return real_fork()
os.fork = fork_failing_once
tool_server._run_and_exit(tool_server.serve(tool_client._server_path(sys.argv[1]) + ".sock"))
"""


def test_a_failed_fork_runs_a_real_interpreter_and_the_server_serves_on(tmp_path):
    import json

    from tests import tool_client

    server = subprocess.Popen(
        [*PYTHON, "-c", FAILING_FORK_SERVER, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        socket_path = Path(tool_client._server_path(str(tmp_path)) + ".sock")
        deadline = time.monotonic() + 120
        while not socket_path.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert socket_path.exists(), server.communicate(timeout=60)
        env = {**os.environ, tool_client.SERVERS_ENV: str(tmp_path), "PROBE_CODE": "3"}
        runs = [run("-u", "-c", PROBE, "x", env=env) for _ in range(2)]
    finally:
        server.kill()  # its client's end takes the server along
        _, log = server.communicate(timeout=60)
    assert [r.returncode for r in runs] == [3, 3], [r.stderr for r in runs]
    first, second = ({k: json.loads(r.stdout)[k] for k in ("forked", "argv")} for r in runs)
    assert first == {"forked": False, "argv": ["-c", "x"]}  # a real interpreter's
    assert second == {"forked": True, "argv": ["-c", "x"]}  # the same server's next fork
    assert "tool server: fork failed (BlockingIOError: [Errno 11]" in log
