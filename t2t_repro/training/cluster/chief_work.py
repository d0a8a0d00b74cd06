"""Work only the chief does (its checkpoint write, dev decodes, attention images, split
decodes), while the other workers wait for it outside the collective timeout.

Why: the other workers would otherwise wait in their next collective, and a chief's dev
decode of a large model on a CPU (minutes) would end a healthy cluster through
``--collective_timeout_secs``. So while the chief works (in its main thread), a thread of the
chief answers the others' polls: each poll is one small all-reduce of a "done" flag
(``Agreement``), which the chief joins every ``poll_secs``, so no collective waits longer
than that. When the work is done the chief's thread answers "done" and every worker goes on.
The wait is bounded by the chief's own watchdog (``watchdog.py``: a chief idle in its work for
``--collective_timeout_secs`` is ended, and its peers' next poll fails with the peer line).
With ``--collective_timeout_secs=0`` there is neither: a peer that dies is still noticed (its
connection closes, TensorFlow's coordination service misses its heartbeats: the chief's next
poll fails and the chief stops when its work is done), but a peer that is stuck without dying
(a read that never returns) leaves the chief's poll, and so every worker, waiting forever.

The chief's work must issue no collective: the others would never join it. ``chief_only.py``
refuses one in one line, in the thread that runs the work.

The poll's function is traced once by every worker together (``prepare``), in the same
place, so the collective keys it is given match on every worker although the chief later
runs it from another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from t2t_repro.training.cluster.agreement import Agreement
from t2t_repro.training.cluster.chief_only import chief_only
from t2t_repro.training.cluster.tf_config import Cluster
from t2t_repro.training.cluster.watchdog import QUIET_THREAD, Watchdog, drill

POLL_SECS = 1.0


class ChiefWork:
    def __init__(self, strategy, cluster: Cluster, watchdog: Watchdog, timeout_secs: float):
        self.cluster = cluster
        self.watchdog = watchdog
        self.agree = Agreement(strategy, cluster.workers)
        # Well inside the collective timeout (0: none).
        self.poll_secs = min(POLL_SECS, timeout_secs / 4) if timeout_secs else POLL_SECS

    def prepare(self) -> None:
        """Traces the poll on every worker at the same point (all workers call it)."""
        if self.cluster.workers > 1:
            self.agree(done=True)

    def __call__(self, stage: str, work: Callable[[], Any]) -> Any:
        """``work()`` on the chief (its result), None on the other workers, which wait."""
        if self.cluster.workers == 1:
            with self.watchdog.stage(stage):
                return work()
        if not self.cluster.is_chief:
            with self.watchdog.stage(f"wait for the chief's {stage}", waits_for_peers=True):
                while not self.agree(done=False)["done"]:
                    self.watchdog.beat()
            return None
        done, failed, lost = threading.Event(), threading.Event(), []
        answers = threading.Thread(
            target=self._answer,
            args=(done, failed, lost),
            daemon=True,
            name=f"{QUIET_THREAD}: the chief's poll answers",  # never the stage's work
        )
        answers.start()
        try:
            with self.watchdog.stage(stage), chief_only(stage):
                if drill(stage) == "collective":  # T2T_DRILL_STAGE: a bug's collective
                    Agreement(self.agree.strategy, self.cluster.workers)(drill=True)
                result = work()
        except BaseException:
            failed.set()  # no "done": the others' next poll fails once this process exits
            raise
        finally:
            done.set()
        answers.join()
        if lost:  # a peer failed while the chief worked: its error, as from any collective
            raise lost[0]
        return result

    def _answer(self, done: threading.Event, failed: threading.Event, lost: list) -> None:
        while True:
            finished = done.wait(self.poll_secs)
            if failed.is_set():
                return
            try:
                self.agree(done=finished)
            except Exception as e:  # noqa: BLE001 (raised again in the main thread)
                lost.append(e)
                return
            if finished:
                return
