"""Runs a tool as its console script does, from this checkout: ``python -m
t2t_repro.commands.<tool>`` in the repository root (so no install is needed).

``PYTHON`` is the interpreter for such runs: ``tests/tool_client.py``, which behaves as
``python`` but starts the program from a server that imported TensorFlow once (~0.2 s instead
of ~4 s a run), or execs a real interpreter when the start-up itself is under test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from t2t_repro.workflow import tool_module

ROOT = Path(__file__).resolve().parents[1]
# The environment a user has: without the test session's TF_CPP_MIN_LOG_LEVEL or T2T_VERBOSE.
USER_ENV = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "T2T_VERBOSE")}
# For the test runs' hparams: T2T's shuffle over 512 batches (batch_shuffle_size) reads ~25,000
# examples of a toy problem before a run's first step (1-1.6 s a run); 16 batches still shuffle.
SMALL_BATCH_SHUFFLE = "batch_shuffle_size=16"
# The width of the suite's toy models: their steps and searches trace in a fraction of
# transformer_tiny's time (width 128).
TINY_WIDTH = "hidden_size=32,filter_size=64,num_heads=2"
# One layer, for the in-process models of search and decoder checks.
TINY_MODEL = f"{TINY_WIDTH},num_hidden_layers=1"
# The model of the training runs that check plumbing (flags, files, messages, schedules,
# resumption, precisions, clusters, usr_dirs), of the decoder-side tools' toy checkpoint and
# of the sampling and ensemble searches: a decoder layer and no encoder layer (T2T's
# num_encoder_layers falls back to num_hidden_layers=0: the encoder is the embedding and its
# final layer norm, which the decoder layer attends to). Its 24 weights, not TINY_MODEL's 36,
# make its training step ~2/3 the graph ops: ~1 of a toy run's ~4.8 CPU-s with an evaluation
# and dev decodes (AMD EPYC Zen 4). Encoder layers stay trained and checked elsewhere: the
# learning test, the mirrored and loopback encoder-decoder checks, the T2T comparisons and
# the import's resumed run. NO_ENCODER_LAYER: the same layers at a test's own width.
NO_ENCODER_LAYER = "num_hidden_layers=0,num_decoder_layers=1"
PLUMBING_MODEL = f"{TINY_WIDTH},{NO_ENCODER_LAYER}"
# No layer at all, for the multi-replica checks (tests/distributed_check.py's, and test_trainer's
# loopback cluster's of T2T's other optimizers): an update reduces across replicas as the
# embedding and the final layer norm show; one layer's 14 more weights made each traced update
# ~2-3x dearer. (The trainer refuses it for an encoder-decoder: its decoder
# would never read the encoder; hparams_lib/checks.py.)
ZERO_LAYERS = "num_hidden_layers=0"
# The toy training runs' model and batch (test_trainer, test_t2t_hparams; with NO_DROPOUT,
# TINY_PLUMBING).
TINY_TRAINING = (
    f"{PLUMBING_MODEL},batch_size=512,learning_rate_warmup_steps=50,{SMALL_BATCH_SHUFFLE}"
)
# Dropout off, for the training runs that check plumbing (flags, files, messages, schedules,
# resumption), not dropout: its masks (a seed-generator step, a random draw and a select per
# call, and their gradients) are ~30% of a toy run's CPU, trace and first call (1.85 -> 1.30
# CPU-s a run, AMD EPYC Zen 4). Dropout itself, its RNG states in checkpoints, bit-exact
# resumption and XLA training with it stay checked with it on: test_dropout, test_loss_rows,
# test_pad_remover, tests/distributed_check.py's masks, test_trainer's killed-and-resumed and
# mixed-precision runs, the clusters (tests/cluster_run.py), test_xla_padded_training's XLA
# run, and the runs that check T2T's own values and defaults.
NO_DROPOUT = "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0"
TINY_PLUMBING = f"{TINY_TRAINING},{NO_DROPOUT}"
# A TensorFlow C++ log line (info, warning, error, fatal), e.g. "E0000 00:00:17.5 123 x.cc:1]".
TF_LOG_LINE = re.compile(r"^[IWEF]\d{4} ", re.M)
PYTHON = [sys.executable, "-S", str(ROOT / "tests" / "tool_client.py")]


def assert_quiet(stderr: str) -> None:
    """No TensorFlow start-up line reached the user (t2t_repro.console hides them)."""
    assert "cuInit" not in stderr and "absl::InitializeLog" not in stderr, stderr[-3000:]
    assert not TF_LOG_LINE.search(stderr), stderr[-3000:]


def tool_cmd(tool: str, *args) -> list[str]:
    """The command line of ``t2t-<name>``; run it with ``cwd=ROOT``."""
    return [*PYTHON, "-m", tool_module(tool), *map(str, args)]


def run_tool(tool: str, *args, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` of the tool with text output captured (kwargs pass through)."""
    kwargs = {"capture_output": True, "text": True, "cwd": ROOT, **kwargs}
    return subprocess.run(tool_cmd(tool, *args), **kwargs)
