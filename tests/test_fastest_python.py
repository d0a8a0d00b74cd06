"""tools/fastest_python.sh, the Makefile's choice of interpreter for .venv: a Python 3.11 that
can make a venv, the candidate whose calibration loop is quickest; candidates that are not
3.11 or cannot make a venv are skipped, and a shim (pyenv's) gives the interpreter behind it."""

import os
import subprocess
import sys
from pathlib import Path

from tests.tools import ROOT

PICKER = ROOT / "tools" / "fastest_python.sh"
SYSTEM = ("/usr/bin", "/bin")  # sh, awk, readlink


def pick(*dirs) -> str:
    path = os.pathsep.join([*map(str, dirs), *SYSTEM])
    out = subprocess.run(
        ["sh", str(PICKER)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, "FASTEST_PYTHON_ALSO": ""},  # PATH's alone
        timeout=120,
        check=True,
    )
    return out.stdout.strip()


def fake_python(directory: Path, output: str, status: int = 0) -> Path:
    """A ``python3.11`` that answers the probe with ``output`` (seconds, then its path)."""
    directory.mkdir()
    script = directory / "python3.11"
    script.write_text(f"#!/bin/sh\necho '{output}'\nexit {status}\n", encoding="utf-8")
    script.chmod(0o755)
    return directory


def test_the_quickest_answering_candidate_wins(tmp_path):
    # Claimed faster than any real interpreter's 10,000,000 additions, so the fakes decide;
    # the one that fails the probe (not 3.11, or no ensurepip) is skipped however quick.
    refused = fake_python(tmp_path / "refused", "0.001 /refused/python3.11", status=1)
    slow = fake_python(tmp_path / "slow", "0.02 /slow/python3.11")
    quick = fake_python(tmp_path / "quick", "0.01 /quick/python3.11")
    assert pick(refused, slow, quick) == "/quick/python3.11"
    assert pick(refused, slow) == "/slow/python3.11"


def test_a_shim_gives_its_interpreter_which_makes_venvs(tmp_path):
    """pyenv puts a shell script named python3.11 first on PATH: the venv is made with the
    interpreter it runs (the probe prints sys.executable), a 3.11 with venv and ensurepip."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3.11"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    chosen = pick(shims)
    assert chosen != str(shim)
    out = subprocess.run(
        [chosen, "-c", "import sys, ensurepip, venv; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.strip() == "(3, 11)", (chosen, out.stderr)
