"""t2t-trainer --xla with padded buckets: XLA compiles one executable per padded length, and
without them the trainer says how to bound the shapes."""

import os
import re
import subprocess

import numpy as np
import pytest

from tests.model_utils import shared_toy_data
from tests.tools import NO_DROPOUT, ROOT, SMALL_BATCH_SHUFFLE, tool_cmd

TINY = (
    "hidden_size=16,filter_size=32,num_heads=2,num_hidden_layers=1,batch_size=256,"
    + SMALL_BATCH_SHUFFLE
)
HINT = "--hparams=padded_bucket_step=1.2 pads batches to a few lengths"
# TensorFlow's own record of each XLA compilation (shown with T2T_VERBOSE).
COMPILED = re.compile(r"Compilation of XLA executable time")


@pytest.fixture(scope="module")
def data_dir():
    """translate_toy's data, made once for the run (the trainer only reads it)."""
    return shared_toy_data()


def train(data_dir, output_dir, hparams, steps, count_compilations=True):
    """``count_compilations``: with TensorFlow's compile records on stderr (a real interpreter,
    T2T_VERBOSE); else the suite's quiet environment (a start forked from a tool server)."""
    env = dict(os.environ)
    if count_compilations:
        env.update(T2T_VERBOSE="1", TF_CPP_VMODULE="device_compiler=1")
        env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    command = tool_cmd(
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
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


@pytest.mark.slow
def test_xla_compiles_once_per_padded_length(data_dir, tmp_path):
    # translate_toy with max_length=12: padded lengths 8 and 12 only (T2T's buckets compiled
    # 5 executables in the same 30 steps).
    # Dropout off (tests/tools.py): the compile count does not depend on it, and the other run
    # trains under XLA with it.
    hparams = f"{TINY},{NO_DROPOUT},max_length=12,padded_bucket_step=1.2"
    out = train(data_dir, tmp_path / "padded", hparams, 30)
    compilations = len(COMPILED.findall(out.stderr))
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
    # With Grappler: without it (tests/grappler.py) this run's CPU moved within noise (8.1 ->
    # 7.6 core-s, pair differences -2.6 to +0.8; 6 alternating pairs, 2026-12-04).
    out = train(data_dir, tmp_path / "t2t", TINY + ",max_length=12", 1, count_compilations=False)
    assert HINT in out.stdout
