"""bench_suite --traces' accounts (tests/trace_accounts.py): one line per outermost trace and
per first call of a traced function, named by its graph, with the test it ran in."""

import json

import tensorflow as tf

from tests import trace_accounts


def test_each_outer_trace_and_each_first_call_is_logged_once(tmp_path):
    path = tmp_path / "traces.jsonl"

    @tf.function
    def inner(x):
        return x + 1.0

    @tf.function
    def lifted():
        return tf.constant(3.0)

    @tf.function
    def outer(x):
        with tf.init_scope():  # run eagerly while outer traces: outer's CPU, no line of its own
            lifted()
        return inner(x) * 2.0  # traced inside outer's trace: outer's CPU, not a line of its own

    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    before = getattr(tracing_compilation, "_t2t_repro_trace_log", None)  # --traces' own, if on
    undo = trace_accounts.install(str(path))
    assert tracing_compilation._t2t_repro_trace_log == str(path)
    try:
        outer(tf.constant(1.0))
        outer(tf.constant(2.0))  # the same concrete function: neither traced nor first again
        outer(tf.constant([1.0, 2.0]))  # a new shape: a second trace and a second first call
    finally:
        undo()
    outer(tf.constant([[1.0]]))  # undone: not logged
    assert getattr(tracing_compilation, "_t2t_repro_trace_log", None) == before
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["kind"], r["function"]) for r in lines] == [
        ("trace", "outer"),
        ("first_call", "outer"),
        ("trace", "outer"),
        ("first_call", "outer"),
    ]
    assert {r["test"] for r in lines} == {
        "tests/test_trace_accounts.py::test_each_outer_trace_and_each_first_call_is_logged_once"
    }
    assert all(r["cpu_s"] > 0 for r in lines if r["kind"] == "trace")  # milliseconds each
    summary = trace_accounts.summarize(str(path))
    assert (summary["traces"], summary["first_calls"]) == (2, 2)


def test_summary_counts_per_function_and_test_and_skips_a_cut_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    records = [
        {"pid": 1, "test": "t::a", "kind": "trace", "function": "loop", "cpu_s": 0.5},
        {"pid": 1, "test": "t::a", "kind": "first_call", "function": "loop", "cpu_s": 0.3},
        {"pid": 2, "test": "t::b", "kind": "trace", "function": "loop", "cpu_s": 1.0},
        {"pid": 3, "test": "", "kind": "trace", "function": "fn", "cpu_s": 0.1},
    ]
    text = "".join(json.dumps(r) + "\n" for r in records) + '{"pid": 4, "te'  # a killed writer
    path.write_text(text)
    summary = trace_accounts.summarize(str(path))
    assert (summary["traces"], summary["trace_cpu_s"]) == (3, 1.6)
    assert (summary["first_calls"], summary["first_call_cpu_s"]) == (1, 0.3)
    assert summary["by_function"] == [
        {"kind": "trace", "function": "loop", "count": 2, "cpu_s": 1.5},
        {"kind": "first_call", "function": "loop", "count": 1, "cpu_s": 0.3},
        {"kind": "trace", "function": "fn", "count": 1, "cpu_s": 0.1},
    ]
    assert list(summary["by_test"].items()) == [  # costliest first
        ("t::b", 1.0),
        ("t::a", 0.8),
        ("(no test: a shared build or a process of its own)", 0.1),
    ]


def test_graph_names_and_an_unset_log_wraps_nothing(monkeypatch):
    from tensorflow.python.eager.polymorphic_function import tracing_compilation
    from tensorflow.python.eager.polymorphic_function.atomic_function import AtomicFunction

    assert trace_accounts.graph_name("__inference_loop_3162") == "loop"
    assert trace_accounts.graph_name("__inference_Dataset_map_<lambda>_12") == (
        "Dataset_map_<lambda>"
    )
    assert trace_accounts.graph_name("plain") == "plain"
    assert trace_accounts.graph_name("__forward_g_27") == "g (forward)"
    assert trace_accounts.graph_name("__inference___backward_g_19_28") == "g (backward)"
    monkeypatch.delenv(trace_accounts.TRACE_LOG_ENV, raising=False)
    before = tracing_compilation._create_concrete_function, AtomicFunction.call_flat
    trace_accounts.install_from_env()
    assert (tracing_compilation._create_concrete_function, AtomicFunction.call_flat) == before
