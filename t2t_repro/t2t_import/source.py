"""Reads a tensor2tensor 1.x training directory without changing anything in it.

What T2T leaves in its ``--output_dir``: a ``checkpoint`` state file naming the newest
``model.ckpt-N`` (TF1 name-based checkpoint), ``hparams.json`` (T2T's ``HParams.to_json``:
the values it trained with) and ``flags.txt`` (one ``--name=value`` per line). A directory
copied from another machine keeps absolute paths in ``checkpoint``; those are looked up by
their base name in the directory itself.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from t2t_repro import fileio
from t2t_repro.t2t_import.errors import T2TImportError


@dataclass(frozen=True)
class T2TTrainDir:
    path: str
    prefix: str  # The checkpoint prefix, e.g. <path>/model.ckpt-250000.
    hparams: dict[str, Any]  # T2T's hparams.json as written.
    flags: dict[str, str]  # flags.txt (empty when the file is absent).


def checkpoint_prefix(path: str) -> str:
    """The newest checkpoint of a T2T directory, or the prefix itself if one is given."""
    if not fileio.isdir(path):
        if fileio.exists(path + ".index"):
            return path
        raise T2TImportError(
            f"--t2t_dir {path!r} is neither a T2T train directory nor a "
            "checkpoint prefix (no such directory, no .index file)."
        )
    state = os.path.join(path, "checkpoint")
    if not fileio.exists(state):
        raise T2TImportError(
            f"{path!r} has no 'checkpoint' file: is it a T2T train dir "
            "(t2t-trainer --output_dir)? Pass the directory holding model.ckpt-N."
        )
    text = fileio.open(state, encoding="utf-8").read()
    match = re.search(r'^model_checkpoint_path:\s*"(.*)"\s*$', text, re.M)
    if not match:
        raise T2TImportError(
            f"{state} names no model_checkpoint_path; it is corrupt. Restore "
            'it (a line model_checkpoint_path: "model.ckpt-N").'
        )
    named = match.group(1)
    for candidate in (os.path.join(path, named), os.path.join(path, os.path.basename(named))):
        if fileio.exists(candidate + ".index"):
            return candidate
    raise T2TImportError(
        f"{state} names checkpoint {named!r}, but {path} has no "
        f"{os.path.basename(named)}.index; copy the checkpoint files too."
    )


def read_flags(path: str) -> dict[str, str]:
    """flags.txt as {name: value}; {} when absent (the command's flags must say enough)."""
    flags_path = os.path.join(path, "flags.txt")
    if not fileio.exists(flags_path):
        return {}
    flags = {}
    for number, line in enumerate(fileio.open(flags_path, encoding="utf-8"), 1):
        line = line.strip()
        if not line:
            continue
        if not line.startswith("--") or "=" not in line:
            raise T2TImportError(f"{flags_path} line {number} is not --name=value: {line!r}.")
        name, value = line[2:].split("=", 1)
        flags[name] = value
    return flags


def read_hparams(path: str) -> dict[str, Any]:
    hparams_path = os.path.join(path, "hparams.json")
    if not fileio.exists(hparams_path):
        raise T2TImportError(
            f"{path!r} has no hparams.json. T2T writes it when training starts; "
            "without it the model's shape is unknown."
        )
    try:
        values = json.loads(fileio.open(hparams_path, encoding="utf-8").read())
    except json.JSONDecodeError as e:
        raise T2TImportError(f"{hparams_path} is not valid JSON: {e}.") from e
    if not isinstance(values, dict):
        raise T2TImportError(f"{hparams_path} must hold a JSON object of name: value.")
    return values


def read_t2t_dir(path: str) -> T2TTrainDir:
    prefix = checkpoint_prefix(path)
    directory = path if fileio.isdir(path) else os.path.dirname(path)
    return T2TTrainDir(directory, prefix, read_hparams(directory), read_flags(directory))
