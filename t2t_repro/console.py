"""A quiet console: the tools show lines about the user's run, not TensorFlow's start-up.

Importing TensorFlow writes C++ log lines straight to file descriptor 2, some before absl's
logging is even set up (so ``TF_CPP_MIN_LOG_LEVEL`` cannot hide them), and the first device
query logs ``E0000 ... failed call to cuInit`` on every machine without a GPU. A new user
reads those as failures. So the tools start TensorFlow (import + device discovery) with fd 2
sent to a temp file, then write back every line except the known start-up chatter: a real
error (any other ``E``/``F`` line, a Python traceback) still reaches the user. After
start-up, ``TF_CPP_MIN_LOG_LEVEL=2`` keeps C++ errors visible and hides info and warnings.

``--verbose`` or ``T2T_VERBOSE=1`` shows everything, TensorFlow's warnings included.

The start also skips what Keras imports with itself for helpers no tool calls
(``deferred_imports``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
import tempfile
from collections.abc import Iterator

from t2t_repro import deferred_imports

VERBOSE_ENV = "T2T_VERBOSE"

# Start-up chatter: info/warning lines, the absl preamble, the CPU-feature note's second
# line, and the CUDA probing errors of a machine without a (usable) GPU.
_CHATTER = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|[IW]\d{4} [\d:.]+ +\d+ "
    r"|To enable the following instructions:"
    r"|E\d{4} [\d:.]+ +\d+ (cuda_platform|cuda_executor|cuda_diagnostics|cudart_stub"
    r"|cuda_dnn|cuda_fft|cuda_blas|gpu_device)\.cc:\d+\]"
)


def verbose_requested() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def is_chatter(line: str) -> bool:
    return _CHATTER.match(line) is not None


@contextlib.contextmanager
def _stderr_to_file() -> Iterator[tempfile.TemporaryFile]:
    sys.stderr.flush()
    saved = os.dup(2)
    captured = tempfile.TemporaryFile()
    os.dup2(captured.fileno(), 2)
    try:
        yield captured
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


# True between ``import_tensorflow`` and the next ``start_tensorflow``: TensorFlow is imported
# and no device has been looked for yet.
_devices_pending = False


def start_tensorflow() -> None:
    """Imports TensorFlow and discovers devices, hiding the start-up chatter unless verbose.

    Call it before anything imports TensorFlow; later calls (or a TensorFlow already
    imported, as in tests) change nothing, except after ``import_tensorflow``: then this
    call discovers the devices, as quietly.
    """
    if "tensorflow" in sys.modules and not _devices_pending:
        return
    _start(discover_devices=True)


def import_tensorflow() -> None:
    """Imports TensorFlow quietly, as ``start_tensorflow`` does, without discovering devices.

    For a process that forks the programs it runs (the test suite's tool server): device
    discovery initialises each accelerator's runtime (``cuInit`` on a GPU host), which a forked
    child cannot use. The child's own ``start_tensorflow`` then discovers the devices.
    """
    global _devices_pending
    if "tensorflow" in sys.modules:
        return
    _start(discover_devices=False)
    _devices_pending = True


def _start(discover_devices: bool) -> None:
    global _devices_pending
    deferred_imports.defer_unused_imports()
    if verbose_requested():
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
        import tensorflow as tf

        if discover_devices:
            tf.config.list_physical_devices()
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        with _stderr_to_file() as captured:
            try:
                import tensorflow as tf

                if discover_devices:
                    tf.config.list_physical_devices()
            finally:
                captured.seek(0)
                text = captured.read().decode("utf-8", "replace")
        kept = [line for line in text.splitlines(keepends=True) if not is_chatter(line)]
        sys.stderr.write("".join(kept))
        sys.stderr.flush()
        tf.get_logger().setLevel("ERROR")
    if discover_devices:
        _devices_pending = False
    _freeze_imports()


def silence_teardown() -> None:
    """Sends file descriptor 2 to /dev/null once a tool has said, in its one error line, how
    it ended. A multi-worker run's teardown can still write there: absl's raw mutex lines
    (``[mutex.cc : 452] RAW: Lock blocking ...``) from TensorFlow's collective and gRPC
    threads as the process exits, which say nothing to the user and would follow the line
    that does. Unless verbose: then every line stays."""
    if verbose_requested():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _freeze_imports() -> None:
    """TensorFlow's import leaves ~350,000 objects that live as long as the process; moved
    out of the cyclic collector's generations (``gc.freeze``), they are not scanned again at
    every full collection: ~7% less CPU for a short run (a decode, a tiny training run)."""
    gc.freeze()
