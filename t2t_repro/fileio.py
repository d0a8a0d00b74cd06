"""File operations on data, output and checkpoint dirs, for local paths and every file system
TensorFlow reads (``gs://``, ``s3://``, ``hdfs://``, ``ram://``...): T2T did all its file I/O
through ``tf.gfile`` so that a run's data and output can live on object storage.

A path with a scheme (``<scheme>://...``) goes through ``tf.io.gfile``. A local path keeps
Python's own calls, so local runs keep what they had: ``fsync`` before a rename, POSIX atomic
``os.replace``, and ``FileNotFoundError``/``IsADirectoryError`` that the tools report as one
line. Paths with a scheme are never made absolute (``os.path.abspath`` would turn
``gs://bucket/run`` into ``<cwd>/gs:/bucket/run``).

What a rename (the last step of every atomic write) gives on each scheme, per TensorFlow's
file systems: local and ``hdfs://``: atomic. ``gs://`` and ``s3://``: a server-side copy then
a delete, so the target appears whole (an object is visible only once completely written)
but not atomically replaced in one step together with other files, and a killed process can
leave the temp object behind. ``ram://``: one in-memory map (one process only), whole files.
Directory renames (:func:`replace_dir`) are atomic only locally; elsewhere the files are
copied one by one. Docs: docs/reliability.md ("Remote storage").
"""

from __future__ import annotations

import builtins
import contextlib
import fnmatch
import os
import shutil
from typing import IO, Any


def is_url(path: str) -> bool:
    """``gs://b/x``, ``ram://x``: a path that only TensorFlow's file systems can read."""
    return "://" in os.fspath(path)


def _gfile():
    import tensorflow as tf

    return tf.io.gfile


def expand(path: str) -> str:
    """``~`` and relative local paths made absolute; URLs unchanged (their scheme checked)."""
    if not path:
        return path
    if not is_url(path):
        return os.path.abspath(os.path.expanduser(path))
    scheme = path.split("://", 1)[0]
    if scheme not in _gfile().get_registered_schemes():
        from t2t_repro.errors import UsageError

        raise UsageError(
            f"{path}: TensorFlow has no file system for {scheme}:// here (it has gs:// and "
            "ram://); for s3://, hdfs:// or az://, pip install tensorflow-io and import "
            "tensorflow_io in a --t2t_usr_dir module."
        )
    return path


def same_path(a: str, b: str) -> bool:
    """Whether two paths name one place (local: after symlinks; URLs: up to a trailing /)."""
    if is_url(a) or is_url(b):
        return a.rstrip("/") == b.rstrip("/")
    return os.path.realpath(a) == os.path.realpath(b)


def _ram_listed(path: str) -> bool:
    # TF's RamFileSystem says exists/isdir for any string prefix of a stored name
    # ("ram://d/ck" when "ram://d/ckpt-1.index" exists); its parent's listing does not.
    parent, name = os.path.split(path.rstrip("/"))
    return not name or "://" not in parent or name in _gfile().listdir(parent)


def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(path)
    return _gfile().exists(path) and (not path.startswith("ram://") or _ram_listed(path))


def isdir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(path)
    return _gfile().isdir(path) and (not path.startswith("ram://") or _ram_listed(path))


def isfile(path: str) -> bool:
    if not is_url(path):
        return os.path.isfile(path)
    return exists(path) and not _gfile().isdir(path)


def listdir(path: str) -> list[str]:
    """Entry names (no trailing ``/`` on directories, on every scheme)."""
    if not is_url(path):
        return os.listdir(path)
    if not isdir(path):
        raise FileNotFoundError(f"{path}: no such directory")
    return [n.rstrip("/") for n in _gfile().listdir(path)]


def glob(pattern: str) -> list[str]:
    if not is_url(pattern):
        import glob as _glob

        return _glob.glob(pattern)
    # Listing the folder and matching its names works on every scheme, ram:// included.
    folder, name = os.path.split(pattern)
    if not isdir(folder):
        return []
    return [os.path.join(folder, n) for n in listdir(folder) if fnmatch.fnmatchcase(n, name)]


def makedirs(path: str) -> None:
    """Creates ``path`` and its parents; nothing to do when it exists."""
    if is_url(path):
        _gfile().makedirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def makedirs_for(path: str) -> None:
    """Creates the directory that file ``path`` goes into (none for ``gs://bucket/file``)."""
    parent = os.path.dirname(expand(path))
    if not is_url(path) or is_url(parent):
        makedirs(parent)


def remove(path: str) -> None:
    if not is_url(path):
        os.remove(path)
    elif not isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    else:
        _gfile().remove(path)


def rmtree(path: str) -> None:
    """Removes a directory tree; never raises (a leftover is harmless, as with ignore_errors)."""
    if not is_url(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    with contextlib.suppress(Exception):
        _gfile().rmtree(path)


def replace(src: str, dst: str) -> None:
    """Renames file ``src`` over ``dst`` (atomicity per scheme: see the module docstring)."""
    if is_url(src) or is_url(dst):
        _gfile().rename(src, dst, overwrite=True)
    else:
        os.replace(src, dst)


def replace_dir(src: str, dst: str) -> None:
    """Moves directory ``src`` to ``dst`` (which must not exist): one rename locally; file by
    file elsewhere (object stores have no directory rename; ram://'s loses the files),
    deepest folders first, so a SavedModel's ``saved_model.pb`` appears after its variables."""
    if not (is_url(src) or is_url(dst)):
        os.replace(src, dst)
        return
    gfile = _gfile()
    for folder, _, files in gfile.walk(src, topdown=False):
        target = dst + folder[len(src) :]
        gfile.makedirs(target)
        for name in files:
            copy(os.path.join(folder, name), os.path.join(target, name))
    rmtree(src)


def copy(src: str, dst: str) -> None:
    """Copies file ``src`` to ``dst`` (replacing it)."""
    if is_url(src) or is_url(dst):
        _gfile().copy(src, dst, overwrite=True)
    else:
        shutil.copyfile(src, dst)


def getctime(path: str) -> float:
    """A local file's inode change time (T2T's ``os.path.getctime``); a URL's modification
    time, the only one object stores report."""
    return getmtime(path) if is_url(path) else os.path.getctime(path)


def copy_dated(src: str, dst: str) -> None:
    """Copies ``src`` to ``dst`` with its modification time where the file system lets it be
    set (``shutil.copy2``'s, as T2T's tools copy a run's flags.txt)."""
    copy(src, dst)
    set_mtime(dst, getmtime(src))


def getsize(path: str) -> int:
    return _gfile().stat(path).length if is_url(path) else os.path.getsize(path)


def getmtime(path: str) -> float:
    """Modification time in seconds since the epoch (what object stores report for URLs)."""
    if not is_url(path):
        return os.path.getmtime(path)
    if not exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    return _gfile().stat(path).mtime_nsec / 1e9


def set_mtime(path: str, seconds: float) -> bool:
    """Sets a local file's access and modification time (T2T's ``os.utime`` after decoding);
    False for URLs, whose modification time is the upload's and cannot be set."""
    if is_url(path):
        return False
    os.utime(path, (seconds, seconds))
    return True


def open(path: str, mode: str = "r", **kwargs: Any) -> IO:  # noqa: A001
    """``open`` for local paths; ``tf.io.gfile.GFile`` (UTF-8 text, no newline translation,
    the same on Linux) for URLs, where ``encoding``/``newline``/``buffering`` are not needed."""
    if not is_url(path):
        return builtins.open(path, mode, **kwargs)
    if kwargs.get("encoding", "utf-8").lower().replace("-", "") != "utf8":
        raise ValueError(f"{path}: only UTF-8 text on {path.split('://')[0]}://")
    if "r" in mode and not isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    return _gfile().GFile(path, mode.replace("x", "w"))
