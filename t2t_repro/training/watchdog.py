"""Ends a worker that can no longer train with its cluster, instead of letting it hang.

Why: ``--collective_timeout_secs`` makes a worker that waits in a collective give up
(``DeadlineExceededError``), but the worker the others wait for may be stuck outside any
collective -- in a file read that never returns (a hung NFS or FUSE mount) -- and nothing in
TensorFlow ends it: in the drill it stayed alive for minutes after its peer had exited. So
during each loop call (where a worker waits on its input and on its peers) a thread watches
the worker's step counter: no update for twice the collective timeout means that this worker,
or every worker, is stuck. The thread then prints one line and ends the process with exit
code 1 (``os._exit``: the main thread is blocked in a read that Python cannot interrupt).

Not done: probing the peers' ports from this thread (to notice sooner that they exited) made
TensorFlow crash (SIGSEGV) when a collective timed out in the same process, in the drill.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

POLL_SECS = 2.0


class Watchdog:
    """``with watchdog:`` around each loop call; a no-op when not ``enabled`` (one host) or
    without a timeout."""

    def __init__(
        self,
        enabled: bool,
        progress: Callable[[], int],
        stall_secs: float,
        resume: Callable[[], str],
        poll_secs: float = POLL_SECS,
    ) -> None:
        self.enabled = enabled and stall_secs > 0
        self.progress = progress
        self.stall_secs = stall_secs
        self.resume = resume
        self.poll_secs = poll_secs
        self._armed_since: float | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Watchdog:
        if self.enabled:
            self._armed_since = time.time()
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
                self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._armed_since = None

    def _watch(self) -> None:
        last_value, last_change = None, time.time()
        while True:
            time.sleep(self.poll_secs)
            since = self._armed_since
            if since is None:
                continue
            value, now = self.progress(), time.time()
            if value != last_value:
                last_value, last_change = value, now
            stalled = now - max(last_change, since)
            if stalled > self.stall_secs and self._armed_since is not None:
                self._fire(
                    f"no training step for {stalled:.0f} s (twice --collective_timeout_secs): "
                    "this worker's input is stuck (a hung file-system read?), or every worker's"
                )

    def _fire(self, what: str) -> None:
        sys.stdout.flush()
        print(
            f"t2t-trainer: error: {what}. Restart the whole cluster (every process, same "
            f"command); {self.resume()}.",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)
