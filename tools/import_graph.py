#!/usr/bin/env python3
"""Which parts of t2t_repro import which, read from the source (no import is executed).

A part is a subpackage (``training``) or a top-level module (``cli``); the top-level
``problems`` and ``hparams`` packages are parts too. Every ``import``/``from ... import``
(also those inside functions) counts. docs/architecture.md states the layering this measures;
tests/test_architecture.py holds the two together.

    python -m tools.import_graph            # one line per part: what it imports
    python -m tools.import_graph --dot      # Graphviz
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "t2t_repro"
REGISTRATIONS = ("problems", "hparams")  # the top-level packages that register


def parts() -> dict[str, list[Path]]:
    """Part name -> its source files: ``t2t_repro/<sub>/`` or ``t2t_repro/<module>.py``, plus
    the top-level registration packages."""
    found: dict[str, list[Path]] = {}
    for path in sorted((REPO / PACKAGE).iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            found[path.name] = sorted(path.rglob("*.py"))
        elif path.suffix == ".py" and path.name != "__init__.py":
            found[path.stem] = [path]
    for name in REGISTRATIONS:
        found[name] = sorted((REPO / name).rglob("*.py"))
    return found


def _part_of(module: str, names: set[str]) -> str | None:
    pieces = module.split(".")
    if pieces[0] == PACKAGE and len(pieces) > 1 and pieces[1] in names:
        return pieces[1]
    if pieces[0] in REGISTRATIONS:
        return pieces[0]
    return None


def _imported(path: Path) -> set[str]:
    """Absolute module names ``path`` imports (``from t2t_repro import x`` gives ``t2t_repro.x``;
    relative imports resolved against the file's package)."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Part -> the other parts it imports."""
    found = parts()
    names = set(found)
    graph: dict[str, set[str]] = {}
    for name, files in found.items():
        targets = {_part_of(m, names) for path in files for m in _imported(path)}
        graph[name] = {t for t in targets if t and t != name}
    return graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dot", action="store_true", help="print a Graphviz digraph")
    args = parser.parse_args(argv)
    graph = import_graph()
    if args.dot:
        print("digraph t2t_repro {")
        for name, targets in sorted(graph.items()):
            for target in sorted(targets):
                print(f'  "{name}" -> "{target}";')
        print("}")
    else:
        for name, targets in sorted(graph.items()):
            print(f"{name}: {', '.join(sorted(targets)) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
