"""Read-only test data built once for the whole run, whichever test process asks first.

pytest-xdist's work stealing spreads a module's tests over the three test processes, and each
process that runs one of them builds the module's fixtures again: a toy export (a
``t2t-exporter`` run, ~13 core-s) was built two or three times a run. ``build_once`` builds
into a directory of the run's shared directory (``tests/conftest.py`` makes it, as the tool
servers' one, and removes it at the end) under a file lock: the first process builds, the
others wait for it and reuse it. Only for data the tests read and never change.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def shared_root() -> Path:
    """The run's shared directory (this process's own temporary one without the suite's)."""
    servers = os.environ.get("T2T_REPRO_TEST_TOOL_SERVERS")
    if servers and os.path.isdir(servers):
        root = Path(servers) / "shared_builds"
    else:
        root = Path(tempfile.gettempdir()) / f"t2t_shared_builds_{os.getpid()}"
    root.mkdir(exist_ok=True)
    return root


def build_once(name: str, build: Callable[[Path], None]) -> Path:
    """``root/name``, made by ``build(path)`` on an empty directory the first time any test
    process asks; a ``.done`` file beside it marks it complete (built in place: a checkpoint
    or an export may record its own path). A failed build is removed, and the next process to
    ask builds again."""
    root = shared_root()
    path, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            try:
                build(path)
            except BaseException:
                shutil.rmtree(path, ignore_errors=True)
                raise
            done.touch()
    return path
