"""pytest-xdist's work stealing with a first deal balanced by cost (tests/conftest.py's
``pytest_xdist_make_scheduler`` picks it for ``--dist worksteal``).

xdist deals the collection out in equal counts of tests, in order: the first test process got
the first third, which, with the costliest files first, held most of the suite's CPU (the
learning run, the shared mirrored check, the clusters, the exports). The others ran through
hundreds of cheap tests and then stole from its end, so its costly files ran one after the
other and the last of them (an XLA file, ~20 s) was left alone on one core while the other
sat idle. Here each file goes whole (its module fixtures are built once) to the process with
the least budgeted CPU so far, costliest file first (longest processing time first), so each
process starts on costly files and ends on cheap ones; stealing then moves cheap tests from
the ends of the queues, as before.
"""

from __future__ import annotations

from xdist.scheduler import WorkStealingScheduling


def deal(nodeids: list[str], shares: dict[str, float], workers: int) -> list[list[int]]:
    """Indices into ``nodeids`` for each of ``workers`` queues: whole files, each to the queue
    with the least share so far (fewest tests on a tie), costliest first; a file without a
    share (new since the budget) counts as the cheapest. Each queue keeps its files'
    costliest-first order and each file's tests their order."""
    files: dict[str, list[int]] = {}
    for index, nodeid in enumerate(nodeids):
        files.setdefault(nodeid.split("::")[0], []).append(index)
    ranked = sorted(files, key=lambda name: -shares.get(name, 0.0))  # stable: collection order
    queues: list[list[int]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for name in ranked:
        target = min(range(workers), key=lambda w: (loads[w], len(queues[w])))
        queues[target].extend(files[name])
        loads[target] += shares.get(name, 0.0)
    return queues


class CostBalancedScheduling(WorkStealingScheduling):
    """The first deal by ``deal``; everything after it is xdist's work stealing."""

    def __init__(self, config, log, shares: dict[str, float]) -> None:
        super().__init__(config, log)
        self._shares = shares

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a later call: xdist's own rescheduling
            super().schedule()
            return
        if not self._check_nodes_have_same_collection():  # reports the differences
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        if not self.collection:
            return
        nodes = list(self.node2pending)
        for node, indices in zip(
            nodes, deal(self.collection, self._shares, len(nodes)), strict=True
        ):
            if indices:
                self.node2pending[node].extend(indices)
                node.send_runtest_some(indices)
        self.check_schedule()  # a node dealt fewer than two tests steals or shuts down
