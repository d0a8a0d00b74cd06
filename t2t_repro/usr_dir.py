"""``--t2t_usr_dir``: import a user's module or package so that its registrations take effect.

A usr_dir written for tensor2tensor 1.15 imports ``tensor2tensor.*``; when no real tensor2tensor
is installed those names resolve to this project's equivalents (``t2t_compat/aliases.py``), so
its problems and hparams sets register here unchanged (docs/porting.md). Its modules see
TF 1.15's names that TF 2 moved to ``tf.compat.v1`` (``tf.logging``, ``tf.train.Optimizer``:
``t2t_compat/tf1_names.py``).

An exception the usr_dir's own code raises (at import, or later in its ``generate_samples``,
``feature_encoders``, ``hparams``...) is the user's to fix: ``usr_dir_error_line`` makes it one
line naming the usr_dir's file and line, the function and the problem, instead of a traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import traceback
from collections.abc import Iterator

from t2t_repro.t2t_compat import aliases, tf1_names

_ROOTS: list[str] = []  # every usr_dir imported in this process (a package dir or a .py file)


def import_usr_dir(usr_dir: str | None) -> None:
    """Import ``usr_dir`` (a package directory, or a single ``.py`` file) by its own name, as
    T2T's ``utils/usr_dir.py`` (``import_usr_dir``) does: its parent folder first on
    ``sys.path``, then ``importlib.import_module(name)``. The project's own packages never
    take a usr_dir's name (``t2t_repro.builtin.problems``, not ``problems``); a module of
    that name that another library already imported (the standard library's ``code``, say)
    is set aside while the usr_dir is imported (``_name_freed``), so any name is the user's."""
    if not usr_dir:
        return
    path = os.path.abspath(os.path.expanduser(usr_dir)).rstrip(os.sep)
    if not os.path.exists(path) and os.path.isfile(path + ".py"):
        path += ".py"  # T2T's import_module of the name finds a single file too: dir/problems
    if not os.path.exists(path):
        raise FileNotFoundError(f"--t2t_usr_dir {usr_dir}: no such file or directory.")
    parent, name = os.path.split(path)
    if name.endswith(".py"):
        name = name[:-3]
    aliases.install()
    if path not in _ROOTS:
        _ROOTS.append(path)
    finder = tf1_names.UsrDirFinder(path)
    sys.path.insert(0, parent)
    sys.meta_path.insert(0, finder)
    try:
        with _name_freed(name, path):
            importlib.import_module(name)
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(parent)


@contextlib.contextmanager
def _name_freed(name: str, path: str) -> Iterator[None]:
    """While the usr_dir at ``path`` is imported as ``name``: any other module of that name
    (and its submodules) out of ``sys.modules``, and back afterwards, so the library that
    imported it keeps it. The usr_dir's modules keep their own references to each other."""
    taken = {
        key: module
        for key, module in sys.modules.items()
        if (key == name or key.startswith(name + ".")) and not _loaded_from(module, path)
    }
    for key in taken:
        del sys.modules[key]
    try:
        yield
    finally:
        if taken:
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
            sys.modules.update(taken)


def _loaded_from(module: object, path: str) -> bool:
    filename = getattr(module, "__file__", None)
    if not filename:
        return False
    filename = os.path.abspath(filename)
    return filename == path or filename.startswith(path + os.sep)


def _in_usr_dir(filename: str | None) -> bool:
    if not filename:
        return False
    path = os.path.abspath(filename)
    return any(path == root or path.startswith(root + os.sep) for root in _ROOTS)


def _innermost_usr_dir_frame(exc: BaseException) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost frame of the usr_dir's code in ``exc``'s
    traceback (a ``SyntaxError``'s own file and line), or None when its code has none."""
    if isinstance(exc, SyntaxError) and _in_usr_dir(exc.filename):
        return exc.filename, exc.lineno or 0, "<module>"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if _in_usr_dir(frame.filename):
            return frame.filename, frame.lineno or 0, frame.name
    return None


def usr_dir_error_line(
    exc: BaseException, problem: str = "", traceback_hint: bool = True
) -> str | None:
    """One line for an exception raised in a usr_dir's code: what it raised, where (file,
    line, function), for which problem, and what to do (``traceback_hint``: and that
    ``--verbose`` prints the traceback); None when no usr_dir code raised it."""
    found = _innermost_usr_dir_frame(exc)
    if found is None:
        return None
    filename, lineno, function = found
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    message = text.strip().splitlines()
    what = f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__
    for_problem = f" while running problem {problem}" if problem else ""
    return (
        f"your --t2t_usr_dir code raised {what} at {filename}:{lineno} (in {function})"
        f"{for_problem}; fix it there."
        + (" Run with --verbose for the traceback." if traceback_hint else "")
    )
