"""Ends a worker that can no longer train with its cluster, instead of letting it hang.

Why: ``--collective_timeout_secs`` makes a worker that waits in a collective give up
(``DeadlineExceededError``), but the worker the others wait for may be stuck outside any
collective -- in a file read that never returns (a hung NFS or FUSE mount), in a restore, a
save, an evaluation -- and nothing in TensorFlow ends it: in the drill it stayed alive for
minutes after its peer had exited. So every stage of a cluster run (start-up, loop calls,
saves, evaluations, decodes) runs inside ``with watchdog.stage(name):``, and a thread ends
the process with one line naming the stage and exit code 1 when the stage has been *idle*
for longer than its limit (``os._exit``: the main thread may be blocked in a read that
Python cannot interrupt).

Idle means: no progress (a training step, or a ``beat()`` of a stage that counts its own
progress), less than ``BUSY_CPU`` of a core of CPU time for the whole process, and fewer than
``BUSY_IO_BYTES`` read or written (``/proc/self/io``) since the last poll. A worker that
traces the step, compiles it with XLA, decodes or writes a large checkpoint is busy, however
long it takes; a worker blocked in a read that never returns, or waiting for peers, is idle.

Limits (``T`` = ``--collective_timeout_secs``):
- stages where the worker waits for its peers in collectives (the start-up handshake, loop
  calls, evaluations, the wait for the chief's work): ``2 T`` idle, so that a wait for a
  stuck peer ends first through the collective's own timeout, with the peer's line;
- stages of this worker's own work (start-up reads, saves, the chief's dev decodes and
  split decodes): ``T`` idle.

A stuck read can hold Python's GIL (TensorFlow's checkpoint reader does, in a restore whose
file never answers), and then no Python thread runs. So the watchdog also arms a timer in C
(``faulthandler.dump_traceback_later``, which needs no GIL) at each stage's limit and moves it
on at every poll while the process is active; when it fires, it writes to a pipe read by a
small messenger process that prints the stage's one line, and ends the process with exit
code 1 (``faulthandler``'s own exit).

Not done: probing the peers' ports from this thread (to notice sooner that they exited) made
TensorFlow crash (SIGSEGV) when a collective timed out in the same process, in the drill.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

POLL_SECS = 2.0
BUSY_CPU = 0.05  # of one core, over a poll: tracing and XLA compiles use a whole one
BUSY_IO_BYTES = 64 * 1024  # over a poll: a live read or write, however slow the storage
# A drill and test aid (docs/distributed.md): "<stage>=hang" makes that stage hang idle, as
# a hung read does; "<stage>=<seconds>" makes it that much longer, with progress; several
# stages separated by commas. A stage is named by the start of its name.
DRILL_ENV = "T2T_DRILL_STAGE"
# Prints the last line it was sent ("M <idle since> <line>", "{idle}" filled in) when the
# C timer's report starts ("Timeout ("), then exits; at the end of its input, nothing.
MESSENGER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # a stop signal is the trainer's to handle
signal.signal(signal.SIGTERM, signal.SIG_IGN)
text, since = "", 0.0
for line in sys.stdin:
    if line.startswith("M "):
        since, _, text = line[2:].rstrip("\n").partition(" ")
    elif line.startswith("Timeout (") and text:
        sys.stderr.write(text.replace("{idle}", "%.0f" % (time.time() - float(since))) + "\n")
        sys.stderr.flush()
        os._exit(0)
"""


def process_activity() -> tuple[float, int]:
    """(CPU seconds of every thread of this process, bytes it read and wrote so far)."""
    try:
        with open("/proc/self/io") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        moved = int(fields.get("rchar", 0)) + int(fields.get("wchar", 0))
    except OSError:  # not Linux: CPU time alone
        moved = 0
    return time.process_time(), moved


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
        activity: Callable[[], tuple[float, int]] = process_activity,
        backstop: bool = True,
    ) -> None:
        """``backstop``: also the C timer (module doc); off in tests that run in process."""
        self.enabled = enabled and timeout_secs > 0
        self.timeout_secs = timeout_secs
        self.resume = resume
        self.progress = progress
        self.poll_secs = poll_secs
        self.activity = activity
        self._beats = 0
        self._stage: tuple[str, float, bool] | None = None  # name, since, waits for peers
        self._thread: threading.Thread | None = None
        self._backstop = backstop and self.enabled
        self._messenger: subprocess.Popen | None = None
        self._sent = ""
        self._lock = threading.Lock()  # _arm runs in the main thread and in the watchdog's

    def beat(self) -> None:
        """A stage's own progress (a decoded batch, an answered poll)."""
        self._beats += 1

    @contextlib.contextmanager
    def stage(self, name: str, waits_for_peers: bool = False) -> Iterator[None]:
        """Watches ``name`` while it runs (the enclosing stage is watched again after it)."""
        outer = self._stage
        if self.enabled:
            self._stage = (name, time.time(), waits_for_peers)
            self._arm(self._stage, time.time())
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
                self._thread.start()
        try:
            _drill(name, self.beat)
            yield
        finally:
            self._stage = outer if outer is None else (outer[0], time.time(), outer[2])
            if self.enabled:
                self._arm(self._stage, time.time())

    def limit(self, waits_for_peers: bool) -> float:
        return (2 if waits_for_peers else 1) * self.timeout_secs

    def _watch(self) -> None:
        last, last_active = None, time.time()
        while True:
            time.sleep(self.poll_secs)
            now, stage = time.time(), self._stage
            (cpu, moved), seen = self.activity(), (self.progress(), self._beats)
            if last is not None:
                busy = (
                    cpu - last[0] >= BUSY_CPU * (now - last[2]) or moved - last[1] >= BUSY_IO_BYTES
                )
                if busy or seen != last[3]:
                    last_active = now
            last = (cpu, moved, now, seen)
            if stage is None:
                continue
            name, since, waits = stage
            idle_since = max(last_active, since)
            if now - idle_since > self.limit(waits) and self._stage is not None:
                sys.stdout.flush()
                print(
                    self.line(name, waits, f"{now - idle_since:.0f}"), file=sys.stderr, flush=True
                )
                os._exit(1)
            if self._stage is stage:
                self._arm(stage, idle_since)

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
                "no CPU, no file I/O): it is stuck (a hung file-system read or write?)"
            )
        return (
            f"t2t-trainer: error: stuck in the {what}. Restart the whole cluster (every "
            f"process, same command); {self.resume()}."
        )

    def _arm(self, stage: tuple[str, float, bool] | None, idle_since: float) -> None:
        """The C timer at the stage's limit from ``idle_since`` (a few polls later than this
        thread would act: it fires only when no Python thread runs); none between stages."""
        if not self._backstop:
            return
        with self._lock:
            self._arm_locked(stage, idle_since)

    def _arm_locked(self, stage: tuple[str, float, bool] | None, idle_since: float) -> None:
        if stage is None:
            faulthandler.cancel_dump_traceback_later()
            return
        name, _, waits = stage
        text = f"M {idle_since:.3f} {self.line(name, waits, '{idle}')}\n"
        try:
            if self._messenger is None:
                self._messenger = subprocess.Popen(
                    [sys.executable, "-S", "-c", MESSENGER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    text=True,
                )
            if text != self._sent:
                self._messenger.stdin.write(text)
                self._messenger.stdin.flush()
                self._sent = text
        except OSError:  # no messenger: the timer still ends the process, without the line
            pass
        left = self.limit(waits) - (time.time() - idle_since) + 3 * self.poll_secs
        stdin = self._messenger.stdin if self._messenger else sys.stderr
        faulthandler.dump_traceback_later(max(left, self.poll_secs), file=stdin, exit=True)


def _drill(name: str, beat: Callable[[], None]) -> None:
    """``T2T_DRILL_STAGE`` (module doc): a stage made to hang or to last longer, for drills
    and tests of the cluster's ends. Unset, nothing."""
    drills = [item.partition("=") for item in os.environ.get(DRILL_ENV, "").split(",")]
    how = next((how for wanted, _, how in drills if wanted and name.startswith(wanted)), None)
    if how is None:
        return
    if how == "hang":
        threading.Event().wait()
    end = time.time() + float(how)
    while time.time() < end:  # a slow stage that makes progress (a decode, batch by batch)
        time.sleep(0.2)
        beat()
