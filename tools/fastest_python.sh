#!/bin/sh
# Prints the path of the fastest Python 3.11 on this machine that can make a venv: the
# Makefile makes .venv with it when no PYTHON=... is given.
#
# Why: the suite and every tool's start-up are bound by the interpreter (building TensorFlow's
# graphs is mostly Python), and builds of one release differ. Debian's /usr/bin/python3.11
# (PGO and LTO, libpython linked in) runs bench_suite's calibration loop in ~0.23 s where a
# default pyenv build (no PGO, a shared libpython) takes ~0.31 s on the same CPU, and the
# suite costs less CPU on it (README, "Two commands"). The candidates are every python3.11 on
# PATH and those in $FASTEST_PYTHON_ALSO (default: /usr/bin and /usr/local/bin's), each
# interpreter once; each runs that loop (tests/suite_cpu.py, python_loop_seconds; best of 2)
# and the quickest wins. One that is not 3.11 or cannot make a venv with pip (no ensurepip:
# Debian without python3.11-venv) is skipped. None left: plain python3.11, so that making the
# venv says what is missing.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
probe='
import os, sys
if sys.version_info[:2] != (3, 11):
    sys.exit(1)
import ensurepip, venv  # noqa: F401  (a venv with pip can be made)
sys.path.insert(0, sys.argv[1])
from tests.suite_cpu import python_loop_seconds  # bench_suite calibration loop (stdlib only)
print(min(python_loop_seconds(), python_loop_seconds()), os.path.realpath(sys.executable))
'

also=${FASTEST_PYTHON_ALSO-/usr/bin/python3.11 /usr/local/bin/python3.11}
on_path=$(IFS=:; for dir in $PATH; do echo "${dir:-.}/python3.11"; done)
candidates=$(for c in $on_path $also; do
    [ -f "$c" ] && [ -x "$c" ] && readlink -f "$c"
done | awk '!seen[$0]++')
best=""
best_seconds=""
for candidate in $candidates; do
    # sys.executable: the interpreter itself, not a shim in front of it (pyenv's).
    line=$("$candidate" -c "$probe" "$root" 2>/dev/null) || continue
    seconds=${line%% *}
    executable=${line#* }
    if [ -z "$best" ] || awk "BEGIN { exit !($seconds < $best_seconds) }"; then
        best=$executable
        best_seconds=$seconds
    fi
done
echo "${best:-python3.11}"
