"""``pip install .`` gives working t2t-* console scripts that find the built-in registrations.

Offline: a fresh venv sees this interpreter's packages (TensorFlow, pip, setuptools) through a
``.pth`` file, and the project is installed into it without dependencies or build isolation,
from a copy of the sources (so the checkout gets no build files and is not on the path).
"""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.tools import ROOT

SOURCES = ("pyproject.toml", "README.md", "t2t_repro", "problems", "hparams")


def _venv_seeing_our_packages(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib.stdout.strip(), "parent_packages.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


@pytest.mark.slow
def test_pip_install_gives_console_scripts(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    python = _venv_seeing_our_packages(tmp_path / "venv")
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(src),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    shutil.rmtree(src)  # The installed copy must not need its sources.
    bin_dir = tmp_path / "venv" / "bin"
    for tool in (
        "t2t-datagen",
        "t2t-trainer",
        "t2t-decoder",
        "t2t-avg-all",
        "t2t-bleu",
        "t2t-evalb",
        "t2t-exporter",
        "t2t-attention",
        "t2t-quickstart",
        "t2t-import",
    ):
        assert (bin_dir / tool).exists(), tool
    for tool in ("t2t-trainer", "t2t-bleu"):
        out = subprocess.run(
            [str(bin_dir / tool), "--help"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert out.returncode == 0 and out.stdout.startswith(f"usage: {tool}"), out.stderr
    # The installed registry finds the installed problems and hparams sets.
    out = subprocess.run(
        [str(bin_dir / "t2t-datagen"), "--registry_help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "  translate_ende_wmt32k" in out.stdout and "  transformer_base" in out.stdout
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import t2t_repro, problems; print(t2t_repro.__file__); print(problems.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert all(line.startswith(str(tmp_path / "venv")) for line in where.stdout.split()), (
        where.stdout
    )
    # The checkout's bin/ shims run the installed package.
    out = subprocess.run(
        [str(python), str(ROOT / "bin" / "t2t-bleu"), "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.startswith("usage: t2t-bleu"), out.stderr
