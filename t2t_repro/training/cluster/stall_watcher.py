"""The watchdog's judge: a small process that reads a trainer's threads in ``/proc`` and ends
the trainer when its current stage has done nothing for longer than the stage's limit.

Why a process: a stuck call can hold Python's GIL (TensorFlow's checkpoint reader does, in a
restore whose file never answers), and then no Python thread of the trainer runs, so a
watchdog thread inside it can neither see nor act. A timer in C (``faulthandler``) acts
without the GIL but sees nothing: it fired on a restore that was slow but working. This
process needs neither the trainer's GIL nor its cooperation: it reads the kernel's counters
of the trainer's threads, and it can always end the trainer.

What counts as work, per poll (the trainer says which thread runs the stage, ``watchdog.py``):
- progress marks the trainer sends (a training step, a decoded batch, an answered poll);
- the stage thread: any CPU time (``/proc/<pid>/task/<tid>/stat``), any byte it read or
  wrote (``rchar``/``wchar`` of ``.../io``: files, pipes), or ``WAKES`` wake-ups from a
  blocking call (``voluntary_ctxt_switches`` of ``.../status``). Linux counts no socket bytes
  per thread (``recv``/``send`` are not in ``rchar``/``wchar``), so a transfer is seen by the
  thread waking as data arrives; a thread blocked in a read that never returns neither runs
  nor wakes;
- the process's other threads (TensorFlow runs a stage's ops, reads and writes on unnamed
  threads of its pools, which ``/proc`` cannot tell from tf.data's, and a strategy traces the
  step in Python threads of its own while the stage thread waits): ``BUSY_CPU`` of a core or
  ``BUSY_IO_BYTES``, as a background hum (gRPC, the coordination service's heartbeats) stays
  below both.
The trainer's quiet threads (this watchdog's poller, the chief's poll-answering thread,
``watchdog.QUIET_THREAD``) never count.

How it ends the trainer: it prints the stage's line (the trainer's stderr is its own), then
writes ``E`` to the trainer's poller thread, which exits with code 1; if the trainer has not
exited ``GRACE_SECS`` later (its GIL is held by the stuck call), SIGKILL (exit status 137).

Protocol (lines on stdin, from the trainer): ``S <tid> <limit> <python tids> <line>`` a stage
starts on thread ``tid`` (``<python tids>``: comma-separated, ``-`` for none); ``L <line>`` the
line changed; ``X <python tids>``; ``B`` progress; ``N`` no stage. ``{idle}`` in a line is
replaced by the idle seconds. End of input: the trainer exited.

Without ``/proc`` (not Linux) it exits at once: it cannot see work, so it judges nothing.
Run by path with ``python -S`` (no site-packages, no TensorFlow): it imports only the
standard library.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

BUSY_CPU = 0.05  # of one core, over a poll, for TensorFlow's threads together
BUSY_IO_BYTES = 64 * 1024  # over a poll, for TensorFlow's threads together
WAKES = 2  # wake-ups of the stage thread over a poll: a transfer, however slow
GRACE_SECS = 3.0
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def thread_counters(pid: int, tid: int) -> tuple[float, int, int] | None:
    """(CPU seconds, bytes read and written, voluntary wake-ups) of one thread; None when
    it is gone. Bytes are 0 where ``io`` cannot be read (not Linux, or no permission)."""
    base = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{base}/stat") as f:
            stat = f.read()
        with open(f"{base}/status") as f:
            status = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    wakes = 0
    for line in status.splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            wakes = int(line.split(":")[1])
    moved = 0
    try:
        with open(f"{base}/io") as f:
            for line in f:
                if line.startswith(("rchar:", "wchar:")):
                    moved += int(line.split(":")[1])
    except OSError:
        pass
    return cpu, moved, wakes


def snapshot(pid: int) -> dict[int, tuple[float, int, int]]:
    """Every thread's counters (``thread_counters``)."""
    found = {}
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return found
    for tid in tids:
        counters = thread_counters(pid, tid)
        if counters is not None:
            found[tid] = counters
    return found


def busy(
    before: dict, after: dict, stage_tid: int, python_tids: set[int], seconds: float
) -> str | None:
    """What did work between two snapshots (a few words), or None: the stage is idle."""
    zero = (0.0, 0, 0)
    if stage_tid in after:
        cpu, moved, wakes = (
            a - b for a, b in zip(after[stage_tid], before.get(stage_tid, zero), strict=True)
        )
        if cpu > 0 or moved > 0 or wakes >= WAKES:
            return f"the stage thread (CPU {cpu:.2f} s, {moved} bytes, {wakes} wake-ups)"
    cpu, moved = 0.0, 0
    for tid, counters in after.items():
        if tid == stage_tid or tid in python_tids:
            continue
        old = before.get(tid, zero)
        cpu += counters[0] - old[0]
        moved += counters[1] - old[1]
    if cpu >= BUSY_CPU * seconds or moved >= BUSY_IO_BYTES:
        return f"TensorFlow's threads (CPU {cpu:.2f} s, {moved} bytes)"
    return None


class Judge:
    """The watcher's state: the current stage and when it last did work."""

    def __init__(self, pid: int, orders: int, poll_secs: float) -> None:
        self.pid, self.orders, self.poll_secs = pid, orders, poll_secs
        self.stage: dict | None = None
        self.before = snapshot(pid)
        self.polled = self.last_work = time.monotonic()

    def command(self, line: str) -> None:
        kind, _, rest = line.partition(" ")
        now = time.monotonic()
        if kind == "S":
            tid, limit, pythons, text = rest.split(" ", 3)
            self.stage = {"tid": int(tid), "limit": float(limit), "line": text, "since": now}
            self.stage["python"] = _tids(pythons)
        elif kind == "N":
            self.stage = None
        elif kind == "B":
            self.last_work = now
        elif self.stage is not None and kind == "L":
            self.stage["line"] = rest
        elif self.stage is not None and kind == "X":
            self.stage["python"] = _tids(rest)

    def poll(self) -> bool:
        """Reads the counters; True when the stage is stuck (the trainer must end)."""
        now = time.monotonic()
        after = snapshot(self.pid)
        stage = self.stage
        if stage is not None and busy(
            self.before, after, stage["tid"], stage["python"], now - self.polled
        ):
            self.last_work = now
        self.before, self.polled = after, now
        if stage is None:
            return False
        return now - max(self.last_work, stage["since"]) > stage["limit"]

    def end(self) -> None:
        stage = self.stage
        idle = time.monotonic() - max(self.last_work, stage["since"])
        os.write(2, (stage["line"].replace("{idle}", f"{idle:.0f}") + "\n").encode())
        try:
            os.write(self.orders, b"E\n")
        except OSError:
            pass
        deadline = time.monotonic() + GRACE_SECS
        while time.monotonic() < deadline:  # the trainer's exit closes our stdin
            ready, _, _ = select.select([0], [], [], deadline - time.monotonic())
            if ready and not os.read(0, 65536):
                return
        try:
            os.kill(self.pid, signal.SIGKILL)  # its GIL is held by the stuck call
        except OSError:
            pass


def _tids(text: str) -> set[int]:
    return {int(t) for t in text.split(",") if t and t != "-"}


def main(argv: list[str]) -> None:
    pid, orders, poll_secs = int(argv[1]), int(argv[2]), float(argv[3])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a stop signal is the trainer's to handle
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    judge, pending = Judge(pid, orders, poll_secs), b""
    if not judge.before:  # no /proc (not Linux): no work can be seen, so nothing is judged
        return
    while True:
        wait = max(0.0, judge.polled + poll_secs - time.monotonic())
        ready, _, _ = select.select([0], [], [], wait)
        if ready:
            data = os.read(0, 65536)
            if not data:
                return  # the trainer exited (or closed the watchdog)
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                judge.command(line.decode())
        if time.monotonic() >= judge.polled + poll_secs and judge.poll():
            judge.end()
            return


if __name__ == "__main__":
    main(sys.argv)
