"""Where the suite's TensorFlow CPU goes: each trace of a ``tf.function`` and each traced
function's first call, with the CPU seconds it took and the test it ran in.

A suite run spent ~29% of its CPU tracing (each trainer run traces its training loop, each
decode its search) and ~18% in the first calls of what it traced (TensorFlow instantiates the
graph there: placement, control-flow lowering, oneDNN's layout pass on a CPU that has it, an
executor per function; then runs it once): Intel Xeon, session 44. Which functions and which
tests pay it decides what to cut; ``bench/bench_suite.py --traces`` reports it.

With ``T2T_REPRO_TEST_TRACE_LOG`` set to a file, every process that runs the suite's code (the
test processes, the tool servers, whose forked runs inherit it, ``tests/fresh_process.py``'s
children) appends a JSON line per outermost trace
(``tensorflow/python/eager/polymorphic_function/tracing_compilation.py``,
``_create_concrete_function``) and per first call of a traced function (``atomic_function.py``,
``AtomicFunction.call_flat``, executing, outside any trace). A first call's CPU is its
instantiation and its first run together: a training loop's first ``steps_per_loop`` updates,
a search's XLA compile when it has one. A function is named by its graph's name (``loop``,
``fn``, ``eval_step``, ``Dataset_map_...``): a first call's function is
``__inference_<graph name>_<number>``. The CPU is the process's (``time.process_time``: a
strategy traces each replica in a thread of its own). Unset, nothing is wrapped.
"""

from __future__ import annotations

import collections
import json
import os
import re
import time
import weakref
from collections.abc import Callable

TRACE_LOG_ENV = "T2T_REPRO_TEST_TRACE_LOG"


def install(path: str) -> Callable[[], None]:
    """Logs traces and first calls to ``path`` from now on; returns what undoes it."""
    from tensorflow.python.eager import context
    from tensorflow.python.eager.polymorphic_function import atomic_function, tracing_compilation

    create = tracing_compilation._create_concrete_function
    call_flat = atomic_function.AtomicFunction.call_flat
    depth = [0]  # a trace inside a trace (a loop body, a gradient) is its outer trace's CPU

    def write(kind: str, function: str, cpu_s: float) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        line = {"pid": os.getpid(), "test": test, "kind": kind, "function": function}
        line["cpu_s"] = round(cpu_s, 4)
        with open(path, "a", encoding="utf-8") as f:  # one short line: one append
            f.write(json.dumps(line) + "\n")

    def traced(*args, **kwargs):
        depth[0] += 1
        start = time.process_time()
        try:
            return create(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                graph = args[2] if len(args) > 2 else kwargs["func_graph"]
                write("trace", graph.name, time.process_time() - start)

    called = weakref.WeakSet()  # this install's own: an install inside another logs apart

    def first_call(self, *args, **kwargs):
        # Called while tracing another function, it adds a call to that graph (or, under the
        # trace's init_scope, runs inside that trace's CPU): not a first call of its own.
        if self in called or depth[0] or not context.executing_eagerly():
            return call_flat(self, *args, **kwargs)
        called.add(self)
        start = time.process_time()
        try:
            return call_flat(self, *args, **kwargs)
        finally:
            name = self.name.decode() if isinstance(self.name, bytes) else str(self.name)
            write("first_call", graph_name(name), time.process_time() - start)

    before = getattr(tracing_compilation, "_t2t_repro_trace_log", None)
    tracing_compilation._create_concrete_function = traced
    atomic_function.AtomicFunction.call_flat = first_call
    tracing_compilation._t2t_repro_trace_log = path  # a forked child finds it installed

    def undo() -> None:
        tracing_compilation._create_concrete_function = create
        atomic_function.AtomicFunction.call_flat = call_flat
        tracing_compilation._t2t_repro_trace_log = before

    return undo


def install_from_env() -> None:
    """``install`` when ``T2T_REPRO_TEST_TRACE_LOG`` names a file (bench_suite's --traces)."""
    path = os.environ.get(TRACE_LOG_ENV)
    if not path:
        return
    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    if getattr(tracing_compilation, "_t2t_repro_trace_log", None) != path:
        install(path)


def graph_name(function_name: str) -> str:
    """The traced graph's name in a function's: ``__inference_loop_3162`` -> ``loop``; a
    function run under a gradient tape, ``__forward_g_27`` -> ``g (forward)`` and
    ``__inference___backward_g_19_28`` -> ``g (backward)``."""
    name = re.sub(r"^__inference_", "", function_name)
    tape = re.match(r"^__(forward|backward)_(.+?)(?:_\d+)+$", name)
    if tape:
        return f"{tape.group(2)} ({tape.group(1)})"
    return re.sub(r"_\d+$", "", name)


def summarize(path: str, top: int = 15) -> dict:
    """The log at ``path`` as counts and CPU seconds: in all, per function and per test, for
    traces and first calls apart; a line cut short by a killed process is skipped."""
    counts, cpu = collections.Counter(), collections.Counter()
    per_function = collections.defaultdict(lambda: [0, 0.0])
    per_test = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            kind = record["kind"]
            counts[kind] += 1
            cpu[kind] += record["cpu_s"]
            entry = per_function[(kind, record["function"])]
            entry[0] += 1
            entry[1] += record["cpu_s"]
            per_test[record["test"] or "(no test: a shared build or a process of its own)"] += (
                record["cpu_s"]
            )
    costliest = sorted(per_function.items(), key=lambda item: -item[1][1])[:top]
    return {
        "traces": counts["trace"],
        "trace_cpu_s": round(cpu["trace"], 1),
        "first_calls": counts["first_call"],
        "first_call_cpu_s": round(cpu["first_call"], 1),
        "by_function": [
            {"kind": kind, "function": name, "count": n, "cpu_s": round(seconds, 1)}
            for (kind, name), (n, seconds) in costliest
        ],
        "by_test": {test: round(s, 1) for test, s in per_test.most_common(top)},
    }
