"""The tools' console: TensorFlow's start-up chatter is hidden, real errors and the run's own
lines are not, and T2T_VERBOSE=1 (or --verbose) brings TensorFlow's lines back. Full runs of
t2t-datagen, t2t-trainer and t2t-decoder are checked for quiet in their own tests
(``assert_quiet``)."""

import json
import subprocess

import pytest

from t2t_repro.console import is_chatter
from tests.tools import PYTHON, ROOT, TF_LOG_LINE, USER_ENV, assert_quiet, run_tool


def test_chatter_is_told_from_real_errors():
    hidden = [
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
        "I0000 00:00:1795460330.184219    5209 port.cc:153] oneDNN custom operations are on.\n",
        "I0000 00:00:1795460330.185259    5209 cudart_stub.cc:31] Could not find cuda drivers\n",
        "E0000 00:00:1795460331.438439    5209 cuda_platform.cc:52] failed call to cuInit: "
        "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n",
        "To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow\n",
    ]
    kept = [
        "E0000 00:00:1795460331.438439    5209 op_kernel.cc:1830] OP_REQUIRES failed: OOM\n",
        "F0000 00:00:1795460331.438439    5209 logging.cc:12] Check failed: x\n",
        "Traceback (most recent call last):\n",
        "t2t-trainer: error: --data_dir required\n",
    ]
    assert all(is_chatter(line) for line in hidden)
    assert not any(is_chatter(line) for line in kept)


@pytest.mark.slow
def test_an_error_is_the_only_line_unless_verbose(tmp_path):
    args = ("t2t-datagen", "--problem=translate_toyy", f"--data_dir={tmp_path}")
    quiet = run_tool(*args, env=USER_ENV, timeout=300)
    assert quiet.returncode == 1
    assert_quiet(quiet.stderr)
    assert quiet.stderr.startswith("t2t-datagen: error: Unknown problem 'translate_toyy'")
    assert quiet.stderr.count("\n") == 1, quiet.stderr
    verbose = run_tool(*args, env={**USER_ENV, "T2T_VERBOSE": "1"}, timeout=300)
    assert verbose.returncode == 1 and TF_LOG_LINE.search(verbose.stderr), verbose.stderr
    assert verbose.stderr.rstrip("\n").endswith(quiet.stderr.rstrip("\n"))


# A teardown line after the program's own: what absl's raw mutex log writes to fd 2 when a
# multi-worker run's collective threads are torn down at exit.
LATE_LINE = "[mutex.cc : 452] RAW: Lock blocking 0x1 @\n"
EXITS_WITH_A_LATE_LINE = (
    "import atexit, os, sys\n"
    f"atexit.register(os.write, 2, {LATE_LINE.encode()!r})\n"
    "from t2t_repro.commands.trainer import main\n"
    "sys.exit(main())\n"
)
TWO_WORKERS = json.dumps(
    {"cluster": {"worker": ["localhost:1", "localhost:2"]}, "task": {"type": "worker", "index": 0}}
)


@pytest.mark.parametrize(
    "env, late_line_shown",
    [
        ({"TF_CONFIG": TWO_WORKERS}, False),
        ({}, True),
        ({"TF_CONFIG": TWO_WORKERS, "T2T_VERBOSE": "1"}, True),
    ],
    ids=["worker", "one_process", "worker_verbose"],
)
def test_a_workers_error_line_is_its_last_unless_verbose(env, late_line_shown):
    """A worker that ends with an error says so in one line, and nothing its teardown writes
    to fd 2 follows (``console.silence_teardown``); one process, or --verbose, keeps it."""
    out = subprocess.run(
        [
            *PYTHON,
            "-c",
            EXITS_WITH_A_LATE_LINE,
            "--gpu_automatic_mixed_precision",
            "--mixed_precision=bfloat16",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**USER_ENV, **env},
        timeout=120,
    )
    line = "t2t-trainer: error: --gpu_automatic_mixed_precision is float16; it contradicts "
    assert out.returncode == 1 and out.stderr.startswith(line), out.stderr
    assert out.stderr.endswith(LATE_LINE) == late_line_shown, out.stderr
    assert out.stderr.count("\n") == 1 + late_line_shown, out.stderr
