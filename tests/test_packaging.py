"""``pip install .`` gives working t2t-* console scripts that find the built-in registrations,
under the project's own name (``t2t_repro.builtin.problems``: no top-level ``problems`` or
``hparams`` is installed to shadow a --t2t_usr_dir's).

Offline: a fresh venv sees this interpreter's packages (TensorFlow, pip, setuptools) through a
``.pth`` file, and the project is installed into it without dependencies or build isolation,
from a copy of the sources (so the checkout gets no build files and is not on the path).
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.tools import ROOT

SOURCES = ("pyproject.toml", "setup.py", "README.md", "t2t_repro", "problems", "hparams")
# The venv's runs: without a PYTHONPATH (bench/bench_test_files.py puts a checkout on it),
# which would put the checkout's package before the installed one.
VENV_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
# Each console script's first run as installed (the rest of the suite forks most tool runs from
# a server that imported every command and made the built-in registrations: a tool that forgot
# an import or a registration would pass there). Each way a tool makes its registrations lists
# them (datagen, t2t-import and t2t-translate-all make their own; the other model tools share
# commands/cli.py's, run here by t2t-trainer), t2t-bleu and t2t-evalb score a line, the rest
# show their help, each in a real interpreter. The four that list registrations run the
# installed script in children forked from one interpreter of the venv that has imported
# TensorFlow and nothing of the project (FORKED_RUNS): each child imports the package and makes
# its registrations itself, as a fresh start would, without paying TensorFlow's import again
# (~6 core-s a run on the slowest CPU kind).
REGISTRY = ["--registry_help"], ["  translate_ende_wmt32k", "  transformer_base"]
HELP = ["--help"], ["usage: {tool}"]
FIRST_RUNS = {
    "t2t-datagen": REGISTRY,
    "t2t-trainer": REGISTRY,
    "t2t-import": REGISTRY,
    "t2t-translate-all": REGISTRY,
    "t2t-decoder": HELP,
    "t2t-exporter": HELP,
    "t2t-attention": HELP,
    "t2t-bleu": (["--translation=hyp.txt", "--reference=ref.txt"], ["100.0"]),
    "t2t-evalb": (["--gold=gold.txt", "--test=gold.txt"], ["100.00"]),
    "t2t-avg-all": HELP,
    "t2t-quickstart": HELP,
    "t2t-query-server": HELP,
    "t2t-eval": HELP,
}


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


def _first_run(tool: str, bin_dir: Path) -> subprocess.CompletedProcess:
    args = FIRST_RUNS[tool][0]
    cmd = [str(bin_dir / tool), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, cwd=bin_dir.parents[1], timeout=300, env=VENV_ENV
    )


# Run by the venv's python: imports TensorFlow, then forks a child per installed script, which
# runs it as ``python <script> <args>`` would (tests/tool_server.py's ``_run_and_exit``, loaded
# from its file: it imports nothing of the project), its stdout and stderr to files; prints
# {tool: exit code}.
FORKED_RUNS = """
import importlib.util, json, os, sys
import tensorflow
server_file, bin_dir, out_dir, runs = *sys.argv[1:4], json.loads(sys.argv[4])
spec = importlib.util.spec_from_file_location("_t2t_repro_tests_tool_server", server_file)
server = importlib.util.module_from_spec(spec)
spec.loader.exec_module(server)
children = {}
for tool, args in runs.items():
    pid = os.fork()
    if pid:
        children[pid] = tool
        continue
    for fd, name in ((1, "out"), (2, "err")):
        os.dup2(os.open(os.path.join(out_dir, f"{tool}.{name}"), os.O_WRONLY | os.O_CREAT), fd)
    server._run_and_exit({"args": [os.path.join(bin_dir, tool), *args]})
codes = {}
while children:
    pid, status = os.wait()
    codes[children.pop(pid)] = os.waitstatus_to_exitcode(status)
print(json.dumps(codes))
"""


def _forked_runs(tools: list, python: Path, bin_dir: Path) -> dict:
    """``tools``' first runs (FIRST_RUNS' arguments) as FORKED_RUNS makes them."""
    out_dir = bin_dir.parents[1] / "forked_runs"
    out_dir.mkdir()
    runs = {tool: FIRST_RUNS[tool][0] for tool in tools}
    parent = subprocess.run(
        [
            python,
            "-c",
            FORKED_RUNS,
            ROOT / "tests" / "tool_server.py",
            bin_dir,
            out_dir,
            json.dumps(runs),
        ],
        capture_output=True,
        text=True,
        cwd=bin_dir.parents[1],
        env=VENV_ENV,
        timeout=300,
    )
    assert parent.returncode == 0, parent.stderr[-3000:]
    codes = json.loads(parent.stdout.strip().splitlines()[-1])
    return {
        tool: subprocess.CompletedProcess(
            [tool],
            codes[tool],
            (out_dir / f"{tool}.out").read_text(),
            (out_dir / f"{tool}.err").read_text(),
        )
        for tool in tools
    }


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
        env=VENV_ENV,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    shutil.rmtree(src)  # The installed copy must not need its sources.
    bin_dir = tmp_path / "venv" / "bin"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == set(FIRST_RUNS), "a console script without a real-interpreter run"
    (tmp_path / "hyp.txt").write_text("the cat sat on the mat .\n")
    (tmp_path / "ref.txt").write_text("the cat sat on the mat .\n")
    (tmp_path / "gold.txt").write_text("(S (NP (DT the) (NN cat)) (VP (VBD sat)))\n")
    forked = [tool for tool, run in FIRST_RUNS.items() if run is REGISTRY]
    with ThreadPoolExecutor(4) as pool:  # four at a time, beside the forked runs
        started = {
            tool: pool.submit(_first_run, tool, bin_dir)
            for tool in FIRST_RUNS
            if tool not in forked
        }
        runs = _forked_runs(forked, python, bin_dir)
    runs.update({tool: future.result() for tool, future in started.items()})
    assert sorted(runs) == sorted(FIRST_RUNS) and len(forked) == 4
    for tool, out in runs.items():
        assert out.returncode == 0, f"{tool}: {out.stderr[-3000:]}"
        for expected in FIRST_RUNS[tool][1]:
            assert expected.format(tool=tool) in out.stdout, f"{tool}: {out.stdout[-3000:]}"
    # Where the package and its registrations are found, by the import system's own lookup
    # (find_spec, which an import of them uses): the REGISTRY runs above imported and ran them
    # as installed, so this start need not import TensorFlow again (~5 core-s).
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u;"
            "print(u.find_spec('t2t_repro').origin);"
            "print(u.find_spec('t2t_repro.builtin.problems').origin);"
            "assert not any(map(u.find_spec, ('problems', 'hparams')))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=VENV_ENV,
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
        env=VENV_ENV,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.startswith("usage: t2t-bleu"), out.stderr
