"""Boolean flags in absl's forms (``--name``, ``--name=true|false``, ``--noname``) for
argparse: T2T's tools parse their flags with absl, so T2T command lines use all three."""

from __future__ import annotations

import argparse

_TRUE, _FALSE = ("true", "t", "1", "yes"), ("false", "f", "0", "no")


def parse_bool(text: str) -> bool:
    """absl's spellings of a boolean flag value."""
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_bool(parser, name: str, help: str, default: bool | None = False, dest: str = "") -> None:
    """Adds ``--name`` (optionally ``=true|false``) and a hidden ``--noname`` to ``parser``
    (a parser or an argument group)."""
    dest = dest or name
    parser.add_argument(
        f"--{name}",
        dest=dest,
        nargs="?",
        const=True,
        default=default,
        type=parse_bool,
        metavar="BOOL",
        help=help,
    )
    parser.add_argument(f"--no{name}", dest=dest, action="store_false", help=argparse.SUPPRESS)
