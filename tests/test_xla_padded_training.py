"""t2t-trainer --xla with padded buckets: XLA compiles one executable per padded length, and
without them the trainer says how to bound the shapes."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from tests.model_utils import shared_toy_data
from tests.tools import NO_ENCODER_LAYER, ROOT, SMALL_BATCH_SHUFFLE, tool_cmd

# No encoder layer (tests/tools.py): what XLA compiles per batch shape does not depend on it.
TINY = f"hidden_size=16,filter_size=32,num_heads=2,{NO_ENCODER_LAYER},batch_size=256,"
TINY += SMALL_BATCH_SHUFFLE
HINT = "--hparams=padded_bucket_step=1.2 pads batches to a few lengths"
# XLA's own record of each module it compiles: one file of the module before its passes in
# --xla_dump_to (with T2T's buckets, the 5 compiles below were 5 such files, as TensorFlow's
# "Compilation of XLA executable" log lines counted them in a real interpreter).
COMPILED = "module_*.before_optimizations.txt"


@pytest.fixture(scope="module")
def data_dir():
    """translate_toy's data, made once for the run (the trainer only reads it)."""
    return shared_toy_data()


def trainer_command(data_dir, output_dir, hparams, steps) -> list[str]:
    return tool_cmd(
        "t2t-trainer",
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--hparams={hparams}",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        f"--train_steps={steps}",
        "--schedule=train",
        "--log_step_count_steps=10",
        "--steps_per_loop=10",
        "--random_seed=2",
        "--xla",
    )


def train(data_dir, output_dir, hparams, steps, dump_dir):
    """With XLA's dump of each module it compiles in ``dump_dir``: a run forked from the
    suite's tool server (tests/tool_client.py), as XLA reads XLA_FLAGS at its first compile,
    not a real interpreter for TensorFlow's own compile log lines (~5 core-s more)."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_dump_to={dump_dir}"
    env = dict(os.environ, XLA_FLAGS=flags.strip())
    command = trainer_command(data_dir, output_dir, hparams, steps)
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


@pytest.mark.slow
def test_xla_compiles_once_per_padded_length(data_dir, tmp_path):
    # translate_toy with max_length=12: padded lengths 8 and 12 only (T2T's buckets compiled
    # 5 executables in the same 30 steps).
    # With dropout (T2T's default): the suite's XLA training with it (the run below stops
    # before its first step).
    hparams = f"{TINY},max_length=12,padded_bucket_step=1.2"
    out = train(data_dir, tmp_path / "padded", hparams, 30, tmp_path / "xla_dump")
    compilations = len(list((tmp_path / "xla_dump").glob(COMPILED)))
    shutil.rmtree(tmp_path / "xla_dump")  # ~13 MB of LLVM IR, read no further
    assert 1 <= compilations <= 2, out.stderr[-3000:]
    assert HINT not in out.stdout
    losses = [
        float(line.split("loss ")[1].split(" ")[0])
        for line in out.stdout.splitlines()
        if line.startswith("step ")
    ]
    assert len(losses) == 3 and np.isfinite(losses).all(), out.stdout


@pytest.mark.slow
def test_xla_with_t2t_buckets_points_to_padded_buckets(data_dir, tmp_path):
    """The hint comes before the first step: the run is ended there (in the suite's quiet
    environment, forked from a tool server), before XLA compiles the step, ~2 of the ~4 CPU-s
    the whole 1-step run took (AMD EPYC Zen 4). XLA training, with dropout, runs to its end
    in the test above."""
    command = trainer_command(data_dir, tmp_path / "t2t", TINY + ",max_length=12", 1)
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.decode())
            if HINT in lines[-1]:
                break
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=60)
    assert lines and HINT in lines[-1], "".join(lines) + err.decode()[-3000:]
