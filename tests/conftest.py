"""The built-in problems, hparams sets and models are registered once for every test, as the
tools do (``t2t_repro.commands.builtins``). Each test module's models, traced functions and
Keras state are released when the module ends, so a test process stays small however many
modules it runs (the suite runs in three such processes: ``make test``)."""

import atexit
import gc
import os
import shutil
import tempfile

import pytest

# One TensorFlow thread per op in each test process and the tools it starts (TensorFlow reads
# these before it starts): the suite runs three test processes on two cores, and the tiny test
# models gain nothing from intra-op threads, while idle pool threads spin on the other's core.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
# The suite's XLA compiles (~20 of them per XLA-heavy test) are made cheap: LLVM at -O0 (~20%
# less) and XLA's CPU element-wise emitter instead of its MLIR fusion emitters (whose passes
# took two thirds of a beam search's compile: 39 -> 22 busy core-s for the 19 compiles of
# test_decode_length_buckets). Both keep IEEE float semantics (XLA's CPU back end runs without
# fast-math either way), so every XLA-against-TensorFlow check means what it did. And each
# compile's LLVM module compiled whole, not split into parts for parallel code generation
# (only work for the suite's one thread; the same code either way): six XLA-heavy test files
# 50.7-51.8 core-s against 56.4-59.1 alternating (AMD EPYC Zen 3). The tools and benchmarks
# (bench/) outside the suite compile with XLA's defaults.
_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
_XLA_FLAGS += " --xla_cpu_parallel_codegen_split_count=1"
# `make test-avx2` (T2T_REPRO_TEST_MAX_ISA=AVX2): the kernels TensorFlow runs on a CPU without
# AVX-512 (the AMD EPYC Zen 1 kind), checked on any host: oneDNN's ops off (TensorFlow's
# default there), oneDNN's kernels (its sgemm serves TensorFlow's float32 MatMul either way)
# and XLA's code generation capped at that instruction set. Set before any TensorFlow import,
# here and in the tool servers this file starts.
_MAX_ISA = os.environ.get("T2T_REPRO_TEST_MAX_ISA")
if _MAX_ISA and _MAX_ISA not in ("AVX", "AVX2"):  # the names oneDNN and XLA both know
    pytest.exit(f"T2T_REPRO_TEST_MAX_ISA={_MAX_ISA}: use AVX2 (or AVX), or unset it", returncode=4)
if _MAX_ISA:
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    os.environ["ONEDNN_MAX_CPU_ISA"] = _MAX_ISA
    _XLA_FLAGS += f" --xla_cpu_max_isa={_MAX_ISA}"
os.environ.setdefault("XLA_FLAGS", _XLA_FLAGS)
# The suite's processes and the tools they start log no TensorFlow C++ lines below fatal ones
# (the tests of what a user sees run without it: tests/tools.py's USER_ENV). One value for
# every run: a tool server serves one import-time environment (tests/tool_client.py), so
# make's 2 beside the tests' 3 started two servers, each after a first run in a real process.
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
# Set in the test processes when pytest-xdist starts them from the tool server (below).
FORKED_TEST_PROCESSES_ENV = "T2T_REPRO_TEST_PROCESSES_FORKED"
# The suite never touches the network: no download, here and in the tools it runs (a test
# that downloads from its own loopback server unsets it: tests/test_download.py).
os.environ["T2T_REPRO_OFFLINE"] = "1"

# The tools the suite runs start from servers (tests/tool_client.py) in one directory for the
# whole run: the first process to load this file (pytest-xdist's controller, or pytest itself
# without -n) makes it and owns the servers, and the test processes it starts inherit it, so
# each server imports TensorFlow once for all of them. The servers exit when the owner does.
if "T2T_REPRO_TEST_TOOL_SERVERS" not in os.environ:
    _SERVERS = tempfile.mkdtemp(prefix="t2t_tool_servers_")
    os.environ["T2T_REPRO_TEST_TOOL_SERVERS"] = _SERVERS
    os.environ["T2T_REPRO_TEST_TOOL_SERVERS_OWNER"] = str(os.getpid())
    atexit.register(shutil.rmtree, _SERVERS, ignore_errors=True)

# Each test's CPU seconds and each forked tool run's go to one log for the whole run (the
# first process to load this file makes it, as the servers' directory above), so that the
# run ends with the suite's budget check (pytest_terminal_summary; bench/bench_suite.py
# passes its own log and reads it itself).
if "T2T_REPRO_TEST_CPU_LOG" not in os.environ:
    _CPU_LOG = tempfile.NamedTemporaryFile(prefix="t2t_suite_cpu_", suffix=".jsonl", delete=False)
    _CPU_LOG.close()
    os.environ["T2T_REPRO_TEST_CPU_LOG"] = _CPU_LOG.name
    atexit.register(lambda: os.path.exists(_CPU_LOG.name) and os.unlink(_CPU_LOG.name))


def pytest_configure(config):
    """Registers the built-ins in every process that runs tests, not in pytest-xdist's
    controller (it only hands out test ids: without the import of TensorFlow it starts ~4 s
    sooner, on cores the test processes need)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        _test_processes_from_the_tool_server(config)
        return
    # In a test process forked from the tool server these find their work done (idempotent).
    from t2t_repro.deferred_imports import defer_unused_imports

    defer_unused_imports()  # as the tools do before TensorFlow's import (that module says why)
    _as_if_tensorflow_was_imported_here()
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()
    from tests.tf_overheads import skip_tf_overheads

    skip_tf_overheads()  # TensorFlow work that no test reads (that module says which)
    from tests.trace_accounts import install_from_env

    install_from_env()  # bench_suite --traces: each trace and first call, with its CPU
    gc.freeze()  # what the imports made lives all session: not scanned at every full collection
    # A full collection at most every 100 young ones (Python's default: 10): tracing makes
    # thousands of lasting objects, and each module's teardown below collects in full anyway.
    gc.set_threshold(700, 10, 100)


def _as_if_tensorflow_was_imported_here() -> None:
    """A test process forked from the tool server starts with what its quiet import left
    (``console.import_tensorflow``): device discovery pending and TensorFlow's logger at ERROR.
    A test process that imports TensorFlow itself has neither, and the tests are written for
    it: the tools' in-process runs find TensorFlow started, and its warnings are logged."""
    import logging

    from t2t_repro import console

    if console._devices_pending:
        import tensorflow as tf

        console._devices_pending = False
        tf.get_logger().setLevel(logging.NOTSET)  # TensorFlow's own (its handler's WARNING)


def _test_processes_from_the_tool_server(config) -> None:
    """pytest-xdist starts each test process as the suite starts a tool (tests/tool_client.py,
    ``--test-process``): forked from the server that imported TensorFlow, Keras and the project
    once, instead of three processes importing them each (~2.5 of a test process's ~5.5 CPU-s
    before its first test, AMD EPYC Zen 4). It is the server the tools' runs in this
    environment use anyway, so it costs no import of its own. To execnet each is a ``python
    -u -c`` with the same stdin, stdout, environment and working directory; what the server's
    import left in the process is undone in ``_as_if_tensorflow_was_imported_here``."""
    import shlex
    import sys

    client = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_client.py")
    python = shlex.join([sys.executable, "-S", client, "--test-process"])
    if "popen" in config.option.tx:  # -n's; a --tx of the user's own is left as it is
        os.environ[FORKED_TEST_PROCESSES_ENV] = "1"  # for test_tool_server: they inherit it
    config.option.tx = [
        f"popen//python={python}" if spec == "popen" else spec for spec in config.option.tx
    ]


@pytest.fixture(scope="module", autouse=True)
def _release_module_state():
    yield
    import keras

    _forget_custom_gradients()  # before the collection below, which then frees the graphs
    keras.backend.clear_session()  # with a full gc.collect() (its free_memory=True)
    # What outlived its module (lazily imported modules, caches) lives on: later full
    # collections skip it. Scanning it again and again was ~10% of a test process's CPU
    # (51 of 525 core-s in a full run; 11 with this and pytest_configure's threshold).
    gc.freeze()


@pytest.fixture(scope="module")
def without_grappler():
    """For a module that checks plumbing, not T2T's numbers: ``pytestmark =
    pytest.mark.usefixtures("without_grappler")`` (tests/grappler.py says why)."""
    from tests.grappler import grappler_off

    yield from grappler_off()


@pytest.fixture
def without_grappler_here():
    """For one plumbing test in a module that keeps Grappler for its others: what it checks
    does not hang on graph rewrites (resumption, messages; or both sides of a comparison that
    it builds itself, so every function it runs is first run while this is on)."""
    from tests.grappler import grappler_off

    yield from grappler_off()


def _forget_custom_gradients() -> None:
    """Each trace of a ``tf.custom_gradient`` function (the layer norm, the embedding's, the
    pad remover's, the losses') registers its gradient under a new "CustomGradient-<uid>" in
    TensorFlow's global gradient registry (tensorflow/python/ops/custom_gradient.py,
    ``_graph_mode_decorator``) and never removes it; the gradient's closure holds the traced
    graph. A toy training run kept ~35 MB and ~33,000 objects alive that way, and a test process
    grew past 3 GB. A module's traces are done when it ends (nothing outlives it that is
    differentiated again), so their entries go."""
    from tensorflow.python.framework import ops

    registry = ops._gradient_registry._registry
    for name in [name for name in registry if name.startswith("CustomGradient-")]:
        del registry[name]


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's work stealing, its first deal balanced by each file's share in
    tests/suite_budget.json (tests/xdist_schedule.py says why); xdist's own without them."""
    from tests import suite_cpu

    if config.getoption("dist") != "worksteal":
        return None
    try:
        shares = suite_cpu.load_budget()["files"]
    except (OSError, ValueError, KeyError):
        return None
    from tests.xdist_schedule import CostBalancedScheduling

    return CostBalancedScheduling(config, log, shares)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test's CPU seconds in ``T2T_REPRO_TEST_CPU_LOG``: this process's and its
    waited-for children's (real interpreters), its process's peak resident size so far, and
    its pid and time span, to which the tool client adds the CPU and peak resident size of
    each forked run it relayed (tests/suite_cpu.py reads them)."""
    path = os.environ.get("T2T_REPRO_TEST_CPU_LOG")
    if not path:
        yield
        return
    import json
    import resource
    import time

    def cpu() -> float:
        own, children = (
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    start, begun = cpu(), time.time()
    yield
    line = {"test": item.nodeid, "pid": os.getpid(), "start": begun, "end": time.time()}
    line["cpu_s"] = cpu() - start
    line["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # the peak so far
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After a run of (nearly) the whole suite, in the process that prints the summary: the
    CPU per test file against tests/suite_budget.json, naming each file grown past its share
    (a report: it never changes the run's exit status; tests/suite_cpu.py)."""
    if hasattr(config, "workerinput") or config.option.markexpr or config.option.keyword:
        return  # a worker, or a selection (make test-fast): shares of a part mean nothing
    from tests import suite_cpu

    path = os.environ.get("T2T_REPRO_TEST_CPU_LOG", "")
    if not os.path.exists(path):
        return
    budget = suite_cpu.load_budget()
    by_file = suite_cpu.cpu_accounts(path)["by_file"]
    if len(by_file) < 0.8 * len(budget["files"]):
        return  # a few files: their shares of a partial run mean nothing
    loop_s = suite_cpu.python_loop_seconds()
    _, lines = suite_cpu.report(by_file, budget, loop_s, suite_cpu.cpu_kind())
    terminalreporter.write_sep("-", "suite CPU budget")
    for line in lines:
        terminalreporter.write_line(line)
