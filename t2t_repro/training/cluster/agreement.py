"""Decisions that every worker of a cluster must take together, agreed once per loop call.

Why: a worker that saves, evaluates or stops on its own clock, its own signal or its own view
of the loss leaves the others waiting forever in the next collective (or saving another
step). So the trainer's host-side decisions -- a time-based save is due, the time limit is
up, SIGINT/SIGTERM arrived -- go through one all-reduced flag vector after every loop call:
a flag set on any worker is set on all, so all save the same step and stop at the same
step. Step-based decisions (saves and evaluations every N steps, the NaN stop, whose loss is
already all-reduced in the update) agree by construction. On one host nothing is reduced.
"""

from __future__ import annotations

import tensorflow as tf


class Agreement:
    def __init__(self, strategy: tf.distribute.Strategy, workers: int) -> None:
        self.strategy = strategy
        self.workers = workers

    def __call__(self, **flags: bool) -> dict[str, bool]:
        """Each flag, set when it is set on any worker (one collective for all of them)."""
        if self.workers == 1:
            return flags
        summed = self._sum(tf.constant([float(v) for v in flags.values()]))
        return {name: bool(total > 0) for name, total in zip(flags, summed.numpy(), strict=True)}

    # No control flow to convert: autograph's rewrite (of this and of ``replica``, which
    # ``strategy.run`` converts too when autograph is on) was a cluster worker's only one:
    # ~0.2 CPU-s in a fresh interpreter (its first use), ~0.04 in a test's forked run, whose
    # server has it loaded (AMD EPYC Zen 3).
    @tf.function(autograph=False)
    def _sum(self, values):
        def replica(values):  # tf.identity: placed on the replica's device, as all_reduce needs
            return tf.distribute.get_replica_context().all_reduce("sum", tf.identity(values))

        out = self.strategy.run(replica, args=(values,))
        return self.strategy.experimental_local_results(out)[0]
