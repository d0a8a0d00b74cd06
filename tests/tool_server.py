"""The server behind ``tests/tool_client.py``: imports TensorFlow and the project once, then
forks a child per run, which becomes the program the client asked for.

The import is all it does before forking: no TensorFlow context, device split, op or thread
(TensorFlow starts its thread pools on the first op, in the child). So a child starts as the
program would after ``import``, and sets up everything else itself, as in its own process.
Per run the server sends the client the child's pid, then how it ended (exit code or signal);
a client that dies (a test's SIGKILL, a timeout) takes its child with it.
It exits when the test process that owns it (``T2T_REPRO_TEST_TOOL_SERVERS_OWNER``) is gone.
"""

import functools
import os
import sys


def _load_beside(name: str):
    """A module of tests/ under a private name: a forked run finds no ``tests`` package of
    ours in ``sys.modules`` to shadow the program's own."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_t2t_repro_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The client's constants, read once: the signals it forwards; a run without Grappler's graph
# rewrites (tests/tool_client.py says when; tests/grappler.py why), the in-process tests'
# switch, set before the program's first op.
_CLIENT = _load_beside("tool_client")
GRAPPLER_OFF_ENV = _CLIENT.GRAPPLER_OFF_ENV


def _preload() -> None:
    """What every tool imports: TensorFlow (start-up chatter hidden as the tools hide it),
    Keras, and every module of the project (each tool's, and the library modules the tools
    import only when they run: ~0.15 s a run); and what each run would otherwise
    load again (~0.8 s a run): the built-in registrations (the tools' own call finds them
    made: it is idempotent), TensorFlow Text's ops, and the subword kernel's numba functions
    (loaded from numba's cache on a vocabulary's first use), TensorBoard's summaries and
    tf.data's dataset ops, which the tools import when they run. (``tensor2tensor``'s names
    are installed by a --t2t_usr_dir run's own call, not at import.)"""
    import gc
    import importlib
    import pkgutil

    from t2t_repro import console

    console.import_tensorflow()  # no device discovery: CUDA does not survive a fork
    import keras  # noqa: F401
    import tensorflow_text  # noqa: F401

    import t2t_repro
    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.text_encoding.compiled_vocabulary import CompiledVocabulary

    for module in pkgutil.walk_packages(t2t_repro.__path__, "t2t_repro."):
        importlib.import_module(module.name)  # definitions only: no registration, no op
    import tensorboard.summary  # noqa: F401  (its plugins' summaries: scalar, image, ...)

    for name in (
        "filter_op",
        "flat_map_op",
        "group_by_window_op",
        "interleave_op",
        "padded_batch_op",
    ):
        importlib.import_module(f"tensorflow.python.data.ops.{name}")
    register_builtins()
    CompiledVocabulary(["a_"], "a_")
    _load_beside("tf_overheads").skip_tf_overheads()  # as in the test processes
    _load_beside("trace_accounts").install_from_env()  # bench_suite --traces
    # As the tools do after import (console.py); a child's collector leaves the shared pages alone.
    gc.freeze()


def _receive(conn) -> tuple[dict, list]:
    import json
    import socket

    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "big"):
        more = conn.recv(1 << 20)
        if not more:
            raise ConnectionError("the client went away mid-request")
        data += more
    return json.loads(data[8:]), fds


def _become(request: dict, fds: list) -> None:
    """In the child: the client's stdio, environment, directory; fresh random state."""
    import random
    import signal
    import tempfile

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # TMPDIR is read again
    if os.environ.get(GRAPPLER_OFF_ENV):  # before the program's first op, as its own flag would
        import tensorflow as tf

        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if request.get("unbuffered") or os.environ.get("PYTHONUNBUFFERED"):
        import io

        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace"
        )


def _become_or_exit(request: dict, fds: list) -> None:
    """``_become``, or, if that fails (the client's directory gone, ...), the child says why on
    the client's stderr and exits 1, not on into the server's loop with its signals held."""
    try:
        _become(request, fds)
    except BaseException:  # noqa: BLE001 - any failure ends this child, as a failed start would
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


def serve(path: str) -> dict:
    """Serves until the owner is gone; returns only in a child, with the run to do."""
    import selectors
    import signal
    import socket

    _preload()
    forwarded = _forwarded_signals()
    owner = int(os.environ.get("T2T_REPRO_TEST_TOOL_SERVERS_OWNER", os.getppid()))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    signal.signal(signal.SIGTERM, lambda *_: _stop(children, path))
    # A child's end wakes the loop at once (a byte on this pair), not at the next timeout.
    wake_read, wake_write = socket.socketpair()
    wake_write.setblocking(False)
    signal.set_wakeup_fd(wake_write.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector.register(wake_read, selectors.EVENT_READ)
    while True:
        for key, _events in selector.select(timeout=0.5):
            if key.fileobj is wake_read:
                wake_read.recv(4096)
            elif key.fileobj is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                # Held from the fork until the program runs: one sent early (a client forwards
                # what it got before the pid line) would otherwise meet this server's SIGTERM
                # handler in the child (which stops the server's runs and unlinks its socket) or
                # be dropped when the child resets it. Delivered then, as a fresh process would.
                signal.pthread_sigmask(signal.SIG_BLOCK, forwarded)
                try:
                    pid = os.fork()
                except OSError as e:  # EAGAIN, ENOMEM: the client runs a real interpreter
                    pid, failure = None, f"{type(e).__name__}: {e}"
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    selector.close()
                    for other in [listener, wake_read, wake_write, conn, *children.values()]:
                        other.close()
                    _become_or_exit(request, fds)
                    return request
                signal.pthread_sigmask(signal.SIG_UNBLOCK, forwarded)
                for fd in fds:
                    os.close(fd)
                if pid is None:  # this server goes on serving the next requests
                    print(f"tool server: fork failed ({failure})", file=sys.stderr, flush=True)
                    _send(conn, {"fork_failed": failure})
                    conn.close()
                    continue
                children[pid] = conn
                if _send(conn, {"pid": pid}):
                    selector.register(conn, selectors.EVENT_READ, pid)
                else:  # the client died already: so does its program
                    _kill(pid)
            elif not _receive_any(key.fileobj):  # the client died: so does its program
                selector.unregister(key.fileobj)
                _kill(key.data)
        _reap(children, selector)
        if not _alive(owner):
            _stop(children, path)


@functools.cache
def _forwarded_signals() -> frozenset:
    """The signals a client forwards to its program (tests/tool_client.py)."""
    import signal

    return frozenset(getattr(signal, name) for name in _CLIENT.FORWARDED_SIGNALS)


def _send(conn, message: dict) -> bool:
    """False when the client is gone."""
    import json

    try:
        conn.sendall((json.dumps(message) + "\n").encode())
        return True
    except OSError:
        return False


def _receive_any(conn) -> bytes:
    """What the client sent; b"" when it is gone: closed, or reset (a client killed before it
    read the program's pid resets its connection: ECONNRESET, not an end of file)."""
    try:
        return conn.recv(64)
    except OSError:
        return b""


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(children: dict, selector) -> None:
    while children:
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        if os.WIFSIGNALED(status):
            end = {"signal": os.WTERMSIG(status)}
        else:
            end = {"exit": os.waitstatus_to_exitcode(status)}
        end["cpu_s"] = usage.ru_utime + usage.ru_stime  # for bench/bench_suite.py's accounts
        end["maxrss_kib"] = usage.ru_maxrss
        try:
            selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        _send(conn, end)
        conn.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _stop(children: dict, path: str) -> None:
    for pid in children:
        _kill(pid)
    if os.path.exists(path):
        os.unlink(path)
    os._exit(0)


def _run(request: dict) -> None:
    """``python <args>`` as the interpreter runs it: ``-m``, ``-c`` or a script."""
    import runpy

    args = request["args"]
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]  # run_module puts the module's file first
        sys.path[0] = os.getcwd()
        sys.modules.pop(args[1], None)  # preloaded; ``python -m`` runs it afresh as __main__
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        import types

        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        main = sys.modules["__main__"] = types.ModuleType("__main__")
        exec(compile(args[1], "<string>", "exec"), main.__dict__)
    else:
        sys.argv = list(args)
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


def _exit_code(exit: SystemExit) -> int:
    if exit.code is None or isinstance(exit.code, int):
        return exit.code or 0
    print(exit.code, file=sys.stderr)
    return 1


def _run_and_exit(request: dict) -> None:
    """Runs the program and exits as the interpreter would, without tearing down the thousands
    of preloaded modules (~1 s): non-daemon threads are joined, atexit functions run, stdio
    flushed. An uncaught exception prints its traceback and exits 1; Ctrl-C dies by SIGINT."""
    import atexit
    import signal
    import threading

    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _forwarded_signals())  # held since the fork
        _run(request)
        code = 0
    except SystemExit as exit:
        code = _exit_code(exit)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code = -signal.SIGINT
    except BaseException:  # noqa: BLE001 - as the interpreter reports it
        sys.excepthook(*sys.exc_info())
        code = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    # The checkout these tests belong to, first (as ``python -m`` from its root has it), not
    # tests/ or another checkout's editable install.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _run_and_exit(serve(sys.argv[1]))
