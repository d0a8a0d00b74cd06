"""The watchdog (#56): it ends a stage whose own work stopped, never one that computes or
transfers, even inside a call that holds Python's GIL. Each case runs in its own small
process (never in pytest's: the watchdog ends the process it watches), without TensorFlow:
``watchdog.py`` and its judge ``stall_watcher.py`` import only the standard library.
tests/test_multiworker.py runs it in real clusters (a slow restore, a stuck one)."""

import os
import re
import subprocess
import sys
import threading

import pytest

from t2t_repro.training.cluster import stall_watcher
from t2t_repro.training.cluster.watchdog import QUIET_THREAD, Watchdog

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT, POLL = 1.0, 0.25  # seconds: each stage below lasts 2.5 to 4 times the limit
# ctypes.PyDLL calls C without releasing the GIL, as TensorFlow's checkpoint reader does.
CASE = r"""
import ctypes, os, socket, sys, threading, time
from t2t_repro.training.cluster.watchdog import QUIET_THREAD, Watchdog

libc = ctypes.PyDLL(None)
case, limit, poll, arg = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
ticks = [0]

def ticker():  # counts while the GIL is free
    while True:
        ticks[0] += 1
        time.sleep(0.01)

# Named as the watchdog's own threads are: its wake-ups never count as the stage's work.
threading.Thread(target=ticker, daemon=True, name=f"{QUIET_THREAD}: the test's ticker").start()
dog = Watchdog(True, limit, lambda: "it resumes from ckpt-4", poll_secs=poll)
buf = ctypes.create_string_buffer(4096)
with dog.stage("checkpoint save of step 4"):
    time.sleep(0.05)
    before = ticks[0]
    if case == "busy_gil":  # a C loop holding the GIL, about 2.5 limits long
        n, start = 10**5, time.process_time()
        while time.process_time() - start < 0.05:
            sum(range(n))
            n *= 2
        n = int(n * 2.5 * limit / (time.process_time() - start))
        time.sleep(0.05)
        before = ticks[0]
        sum(range(n))
    elif case == "idle_gil":  # a read from a FIFO nobody writes, holding the GIL
        libc.read(os.open(arg, os.O_RDWR), buf, 4096)
    elif case == "idle":  # the same read, without the GIL
        os.read(os.open(arg, os.O_RDWR), 4096)
    elif case == "socket_gil":  # a loopback transfer slower than the limit, holding the GIL
        sock = socket.create_connection(("127.0.0.1", int(arg)))
        time.sleep(0.05)
        before = ticks[0]
        print("received", libc.recv(sock.fileno(), buf, 4000, 0x100))  # MSG_WAITALL
    # A free GIL lets the ticker tick about 100 times a second; one at each end of the call.
    print("held the GIL" if ticks[0] - before <= 2 else "released the GIL", flush=True)
print("stage done", flush=True)
"""
SENDER = r"""
import socket, sys, time
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
conn, _ = server.accept()
for _ in range(int(float(sys.argv[1]) / 0.05)):  # 50 bytes every 50 ms: slow, but moving
    conn.sendall(b"x" * 50)
    time.sleep(0.05)
conn.close()
"""


def run_case(case, arg="-", timeout=60):
    return subprocess.run(
        [sys.executable, "-c", CASE, case, str(LIMIT), str(POLL), arg],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_busy_call_holding_the_gil_outlives_its_limit():
    done = run_case("busy_gil")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines() == ["held the GIL", "stage done"], done.stdout


def test_a_socket_transfer_slower_than_the_limit_survives():
    sender = subprocess.Popen(
        [sys.executable, "-c", SENDER, str(4 * LIMIT)], stdout=subprocess.PIPE, text=True
    )
    try:
        done = run_case("socket_gil", sender.stdout.readline().strip())
    finally:
        sender.wait(timeout=30)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines == [f"received {50 * int(4 * LIMIT / 0.05)}", "held the GIL", "stage done"], lines


@pytest.mark.parametrize("case, code", [("idle", 1), ("idle_gil", -9)])
def test_an_idle_read_is_ended_with_the_stages_line(tmp_path, case, code):
    """Exit 1 from the trainer's own poller; when the stuck read holds the GIL that poller
    cannot run, and the watcher kills the process (SIGKILL)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    ended = run_case(case, str(fifo))
    assert ended.returncode == code, (ended.returncode, ended.stderr)
    assert ended.stdout == "", ended.stdout
    line = ended.stderr
    # Its idle seconds, rounded: at least the limit (more when the watcher's poll came late).
    idle = re.match(
        r"t2t-trainer: error: stuck in the checkpoint save of step 4: this worker did nothing "
        r"for (\d+) s \(--collective_timeout_secs; no CPU, no I/O in this stage\): it is stuck",
        line,
    )
    assert idle and int(idle.group(1)) >= LIMIT, line
    assert line.endswith("same command); it resumes from ckpt-4.\n") and line.count("\n") == 1


def test_what_counts_as_the_stages_work():
    """``stall_watcher.busy`` on two snapshots ({tid: (CPU s, bytes, wake-ups)}): the stage
    thread's least work counts; TensorFlow's threads count above a hum; the trainer's other
    Python threads never."""
    stage, python, tf_thread = 10, 11, 12
    before = {stage: (1.0, 100, 5), python: (1.0, 0, 0), tf_thread: (1.0, 0, 0)}

    def work(**changes):
        after = dict(before)
        for name, (cpu, moved, wakes) in changes.items():
            tid = {"stage": stage, "python": python, "tf": tf_thread}[name]
            after[tid] = (before[tid][0] + cpu, before[tid][1] + moved, before[tid][2] + wakes)
        return stall_watcher.busy(before, after, stage, {python}, 2.0)

    assert work() is None
    assert work(stage=(0.01, 0, 0)) and work(stage=(0, 1, 0)) and work(stage=(0, 0, 2))
    assert work(stage=(0, 0, 1)) is None  # one wake-up: the end of a wait, not a transfer
    assert work(python=(2.0, 10**9, 100)) is None
    assert work(tf=(0.05, 1000, 50)) is None  # gRPC's and the heartbeats' hum
    assert work(tf=(0.1, 0, 0)) and work(tf=(0, 64 * 1024, 0))
    assert stall_watcher.thread_counters(os.getpid(), os.getpid())[0] > 0


def test_only_the_quiet_threads_are_never_the_stages_work():
    """A strategy traces the step in Python threads of its own (``mirrored_run``) while the
    stage's thread waits for them: their CPU is the stage's work. The watchdog's poller and
    the chief's poll-answering thread (named ``QUIET_THREAD``) are never counted."""
    release = threading.Event()
    quiet = threading.Thread(target=release.wait, name=f"{QUIET_THREAD}: answers")
    tracing = threading.Thread(target=release.wait)
    quiet.start(), tracing.start()
    try:
        listed = Watchdog(True, 30, lambda: "")._python_tids(threading.get_native_id())
    finally:
        release.set()
        quiet.join(), tracing.join()
    tids = {int(t) for t in listed.split(",")}
    assert quiet.native_id in tids and tracing.native_id not in tids, listed
    assert threading.get_native_id() not in tids


def test_one_host_or_no_timeout_is_never_watched():
    assert Watchdog(True, 30, lambda: "").limit(True) == 60
    assert Watchdog(True, 30, lambda: "").limit(False) == 30
    assert not Watchdog(False, 0.05, lambda: "").enabled  # one host: never armed
    assert not Watchdog(True, 0, lambda: "").enabled  # --collective_timeout_secs=0: none
