#!/usr/bin/env python3
"""Which parts of t2t_repro import which, read from the source (no import is executed).

A part is a subpackage (``training``) or a top-level module (``cli``); the checkout's top-level
``problems/`` and ``hparams/`` folders (installed as ``t2t_repro.builtin.problems`` and
``.hparams``, setup.py) are parts too. Every ``import``/``from ... import``
(also those inside functions) counts. docs/architecture.md states the layering this measures;
tests/test_architecture.py holds the two together.

    python -m tools.import_graph            # one line per part: what it imports
    python -m tools.import_graph --dot      # Graphviz
    python -m tools.import_graph --circles  # modules that import each other, in any part

Parts must not import each other in a circle, and neither may two modules inside one part
(``datagen -> generator_utils -> translate -> datagen``): a module-level circle means the
modules cannot be read, tested or moved one at a time. ``--circles`` prints each group of
modules that reach one another (strongly connected components) and exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "t2t_repro"
REGISTRATIONS = ("problems", "hparams")  # the top-level folders that register
BUILTIN = f"{PACKAGE}.builtin"  # their import name's package (t2t_repro/builtin/__init__.py)


def parts() -> dict[str, list[Path]]:
    """Part name -> its source files: ``t2t_repro/<sub>/`` or ``t2t_repro/<module>.py``, plus
    the top-level registration packages."""
    found: dict[str, list[Path]] = {}
    for path in sorted((REPO / PACKAGE).iterdir()):
        if path.name == BUILTIN.rpartition(".")[2]:
            continue  # only the registrations' import name: they are parts of their own
        if path.is_dir() and (path / "__init__.py").exists():
            found[path.name] = sorted(path.rglob("*.py"))
        elif path.suffix == ".py" and path.name != "__init__.py":
            found[path.stem] = [path]
    for name in REGISTRATIONS:
        found[name] = sorted((REPO / name).rglob("*.py"))
    return found


def _part_of(module: str, names: set[str]) -> str | None:
    pieces = module.split(".")
    if module.startswith(BUILTIN + ".") and pieces[2] in REGISTRATIONS:
        return pieces[2]
    if pieces[0] == PACKAGE and len(pieces) > 1 and pieces[1] in names:
        return pieces[1]
    return None


def _module_pieces(path: Path) -> tuple[str, ...]:
    """The import name's parts of a source file (a registration folder's under ``BUILTIN``)."""
    pieces = path.relative_to(REPO).with_suffix("").parts
    return (*BUILTIN.split("."), *pieces) if pieces[0] in REGISTRATIONS else pieces


def _imported(path: Path) -> set[str]:
    """Absolute module names ``path`` imports (``from t2t_repro import x`` gives ``t2t_repro.x``;
    relative imports resolved against the file's package)."""
    package = ".".join(_module_pieces(path)[:-1])
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


def modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the parts (a package's
    ``__init__.py`` under the package's name)."""
    found: dict[str, Path] = {}
    for files in parts().values():
        for path in files:
            pieces = _module_pieces(path)
            if pieces[-1] == "__init__":
                pieces = pieces[:-1]
            found[".".join(pieces)] = path
    return found


def module_graph() -> dict[str, set[str]]:
    """Module -> the other repo modules it imports (``from a.b import c`` names ``a.b.c`` when
    ``c`` is a module, else ``a.b``)."""
    found = modules()

    def resolve(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    return {
        name: {t for t in map(resolve, _imported(path)) if t and t != name}
        for name, path in found.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of two or more nodes that all reach one another (Tarjan's strongly connected
    components, iterative), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dot", action="store_true", help="print a Graphviz digraph")
    parser.add_argument(
        "--circles", action="store_true", help="list modules that import each other; exit 1 if any"
    )
    args = parser.parse_args(argv)
    if args.circles:
        groups = circles(module_graph()) + circles(import_graph())
        for group in groups:
            print("import circle: " + ", ".join(group))
        if not groups:
            print("no import circle between parts or modules")
        return 1 if groups else 0
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
