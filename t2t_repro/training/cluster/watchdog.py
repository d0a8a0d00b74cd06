"""Ends a worker that can no longer train with its cluster, instead of letting it hang.

Why: ``--collective_timeout_secs`` makes a worker that waits in a collective give up
(``DeadlineExceededError``), but the worker the others wait for may be stuck outside any
collective -- in a file read that never returns (a hung NFS or FUSE mount), in a restore, a
save, an evaluation -- and nothing in TensorFlow ends it: in the drill it stayed alive for
minutes after its peer had exited. So every stage of a cluster run (start-up, loop calls,
saves, evaluations, decodes) runs inside ``with watchdog.stage(name):``, and the process is
ended with one line naming the stage when the stage's own work has stopped for longer than
its limit.

Stuck means the stage's own work stopped, not that time passed: the judge is a small process
(``stall_watcher.py``, which says what counts as work) that reads the stage thread's CPU time,
bytes and wake-ups, and those of TensorFlow's threads, in ``/proc``, and hears the stage's
progress marks (a training step, a ``beat()``). A worker that traces the step, compiles it
with XLA, decodes, restores or writes a large checkpoint, or streams one over a socket, is
busy however long it takes, even inside a call that holds Python's GIL; a worker blocked in
a read that never returns, or waiting for peers, is idle. The judge is outside the process
because a stuck call can hold the GIL (TensorFlow's checkpoint reader does), and then no
Python thread of the trainer runs. It prints the line itself, then has this process's poller
thread exit with code 1, or sends SIGKILL when that thread cannot run (the GIL is held).

Limits (``T`` = ``--collective_timeout_secs``):
- stages where the worker waits for its peers in collectives (the start-up handshake, loop
  calls, evaluations, the wait for the chief's work): ``2 T`` idle, so that a wait for a
  stuck peer ends first through the collective's own timeout, with the peer's line;
- stages of this worker's own work (start-up reads, saves, the chief's dev decodes and
  split decodes): ``T`` idle.

Not done: probing the peers' ports from this thread (to notice sooner that they exited) made
TensorFlow crash (SIGSEGV) when a collective timed out in the same process, in the drill.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

from t2t_repro.training.cluster import stall_watcher

POLL_SECS = 2.0
# The name (prefix) of this process's threads that never count as a stage's work: the
# watchdog's poller, the chief's poll-answering thread (``chief_work.py``).
QUIET_THREAD = "watchdog"
# A drill and test aid (docs/distributed.md): "<stage>=hang" makes that stage hang idle, as
# a hung read does; "<stage>=<seconds>" makes it that much longer, with progress;
# "<stage>=collective" makes the chief's work in that stage issue a collective
# (``chief_work.py``); several stages separated by commas. A stage is named by the start of
# its name.
DRILL_ENV = "T2T_DRILL_STAGE"


class Watchdog:
    """``with watchdog.stage(name):`` around each stage; a no-op when not ``enabled`` (one
    host) or without a timeout (``timeout_secs`` 0)."""

    def __init__(
        self,
        enabled: bool,
        timeout_secs: float,
        resume: Callable[[], str],
        progress: Callable[[], int] = lambda: 0,
        poll_secs: float = POLL_SECS,
    ) -> None:
        self.enabled = enabled and timeout_secs > 0
        self.timeout_secs = timeout_secs
        self.resume = resume
        self.progress = progress
        self.poll_secs = poll_secs
        self._beats = 0
        self._stage: tuple[str, bool, int, bool] | None = None  # name, waits, thread, steps
        self._watcher: subprocess.Popen | None = None
        self._orders = -1  # the watcher's orders to this process (read by the poller)
        self._sent: dict[str, str] = {}
        self._lock = threading.Lock()  # the stage's thread and the poller both send

    def beat(self) -> None:
        """A stage's own progress (a decoded batch, an answered poll)."""
        self._beats += 1

    @contextlib.contextmanager
    def stage(
        self, name: str, waits_for_peers: bool = False, steps: bool = False
    ) -> Iterator[None]:
        """Watches ``name`` while it runs (the enclosing stage is watched again after it).
        ``steps``: ``progress()`` counts in it (read by a thread of its own: only there, as
        a TensorFlow op beside a collective that times out once crashed TensorFlow)."""
        outer = self._stage
        if self.enabled:
            self._start(name, waits_for_peers, steps)
        try:
            _drill(name, self.beat)
            yield
        finally:
            self._stage = outer
            if self.enabled:
                self._send("S" if outer else "N", self._stage_message(outer) if outer else "")

    def refresh(self) -> None:
        """The stage's line again (its resume point changed: a restore found its checkpoint)."""
        if self.enabled and self._stage is not None:
            self._send("L", self.line(self._stage[0], self._stage[1], "{idle}"))

    def limit(self, waits_for_peers: bool) -> float:
        return (2 if waits_for_peers else 1) * self.timeout_secs

    def line(self, name: str, waits: bool, idle: str) -> str:
        """The one line that ends a stuck worker (``idle``: its idle seconds)."""
        if waits:
            what = (
                f"{name}: nothing moved for {idle} s (twice --collective_timeout_secs): "
                "this worker's input is stuck (a hung file-system read?), or every worker's"
            )
        else:
            what = (
                f"{name}: this worker did nothing for {idle} s (--collective_timeout_secs; "
                "no CPU, no I/O in this stage): it is stuck (a hung file-system read or write?)"
            )
        return (
            f"t2t-trainer: error: stuck in the {what}. Restart the whole cluster (every "
            f"process, same command); {self.resume()}."
        )

    # -- the link to the watcher (stall_watcher.py) ------------------------------------------
    def _start(self, name: str, waits: bool, steps: bool) -> None:
        if self._watcher is None:
            orders, self._orders_in = os.pipe()
            self._watcher = subprocess.Popen(
                [sys.executable, "-S", stall_watcher.__file__, str(os.getpid())]
                + [str(self._orders_in), str(self.poll_secs)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,  # its line goes to stderr, this process's
                pass_fds=(self._orders_in,),
            )
            os.close(self._orders_in)
            self._orders = orders
            poller = threading.Thread(target=self._poll, daemon=True, name=QUIET_THREAD)
            poller.start()
        self._stage = (name, waits, threading.get_native_id(), steps)
        self._send("S", self._stage_message(self._stage))

    def _stage_message(self, stage: tuple[str, bool, int, bool]) -> str:
        name, waits, tid, _ = stage
        line = self.line(name, waits, "{idle}")
        return f"{tid} {self.limit(waits):g} {self._python_tids(tid)} {line}"

    def _python_tids(self, stage_tid: int) -> str:
        """This process's threads that are never the stage's work: the poller and the threads
        named ``QUIET_THREAD`` (the chief's poll answers). Every other Python thread counts: a
        strategy traces the step in threads of its own (``mirrored_run``), which on a slow or
        loaded machine takes longer than ``2 T`` while the stage thread waits for them."""
        quiet = {t.native_id for t in threading.enumerate() if t.name.startswith(QUIET_THREAD)} - {
            stage_tid,
            None,
        }
        return ",".join(map(str, sorted(quiet))) or "-"

    def _send(self, kind: str, text: str) -> None:
        with self._lock:
            if kind in ("S", "N"):
                self._sent = {}
            elif self._sent.get(kind) == text:
                return
            self._sent[kind] = text
            try:
                self._watcher.stdin.write(f"{kind} {text}\n".encode())
                self._watcher.stdin.flush()
            except (OSError, ValueError):  # the watcher is gone: nothing watches any more
                self.enabled = False

    def _poll(self) -> None:
        """Forwards progress, new Python threads and a changed line to the watcher; exits
        the process when the watcher orders it (the watcher printed the line)."""
        seen = None
        while self.enabled:
            ready, _, _ = select.select([self._orders], [], [], self.poll_secs)
            order = os.read(self._orders, 64) if ready else None
            if order is not None and order.startswith(b"E"):
                sys.stdout.flush()
                os._exit(1)
            if order == b"":  # the watcher is gone: nothing watches any more
                self.enabled = False
                return
            stage = self._stage
            now = (self.progress() if stage is not None and stage[3] else 0, self._beats)
            if now != seen:
                seen = now
                self._send("B", str(time.monotonic()))
            if stage is not None and self.enabled:
                self._send("X", self._python_tids(stage[2]))
                self._send("L", self.line(stage[0], stage[1], "{idle}"))


def _drill(name: str, beat: Callable[[], None]) -> None:
    """``T2T_DRILL_STAGE`` (module doc): a stage made to hang or to last longer, for drills
    and tests of the cluster's ends. Unset, nothing."""
    how = drill(name)
    if how is None:
        return
    print(f"drill: {name}={how}", flush=True)  # when it starts (tests act on it)
    if how == "collective":
        return
    if how == "hang":
        threading.Event().wait()
    end = time.time() + float(how)
    while time.time() < end:  # a slow stage that makes progress (a decode, batch by batch)
        time.sleep(0.2)
        beat()


def drill(name: str) -> str | None:
    """What ``T2T_DRILL_STAGE`` asks of the stage ``name`` (None: nothing)."""
    drills = [item.partition("=") for item in os.environ.get(DRILL_ENV, "").split(",")]
    return next((how for wanted, _, how in drills if wanted and name.startswith(wanted)), None)
