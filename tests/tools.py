"""Runs a tool as its console script does, from this checkout: ``python -m
t2t_repro.commands.<tool>`` in the repository root (so no install is needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from t2t_repro.workflow import tool_module

ROOT = Path(__file__).resolve().parents[1]


def tool_cmd(tool: str, *args) -> list[str]:
    """The command line of ``t2t-<name>``; run it with ``cwd=ROOT``."""
    return [sys.executable, "-m", tool_module(tool), *map(str, args)]


def run_tool(tool: str, *args, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` of the tool with text output captured (kwargs pass through)."""
    kwargs = {"capture_output": True, "text": True, "cwd": ROOT, **kwargs}
    return subprocess.run(tool_cmd(tool, *args), **kwargs)
