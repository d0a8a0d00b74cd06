"""Records every module of T2T 1.15.7's wheel (reference test data for the T2T edge).

Walks the installed ``tensor2tensor`` package folder (nothing is imported) and lists each
module by its import name: ``tensor2tensor.models.lstm``, a package by its folder's name
(``tensor2tensor.models`` for ``models/__init__.py``). Tests (``*_test.py``) are left out.
``library`` holds the modules a usr_dir may import (``models``, ``data_generators``,
``layers``, ``utils``, ``metrics``, ``serving``, ``visualization``, ``problems``...);
``refused`` the scripts of ``bin/`` and the ``rl``, ``envs`` and ``insights`` packages, which
the edge refuses in one line at import. ``names_not_modules``: the names a library module binds
to something other than the T2T module of that last name (a usr_dir reading ``module.name``
otherwise gets T2T's module of that name, which T2T's modules import one another by).
``tests/test_t2t_modules.py`` checks that the edge (``t2t_repro/t2t_compat/t2t_modules.py``)
lists exactly these and that each imports.

Usage (README.md here)::

    python tools/t2t_reference/list_t2t_modules.py \
        --t2t=/work/venv-t2t/lib/python3.11/site-packages/tensor2tensor \
        --out=tests/data/t2t_1.15.7_modules.json
"""

import argparse
import ast
import json
import os

from list_t2t_public_names import _installed_version

REFUSED_PACKAGES = ("bin", "rl", "envs", "insights")


def module_names(root: str) -> tuple[list[str], list[str]]:
    """(packages, modules) under ``root``, by import name, tests left out."""
    packages, modules = [], []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        relative = os.path.relpath(folder, root)
        prefix = "tensor2tensor" + ("" if relative == "." else "." + relative.replace(os.sep, "."))
        for name in sorted(files):
            if not name.endswith(".py") or name.endswith("_test.py"):
                continue
            if name == "__init__.py":
                packages.append(prefix)
            else:
                modules.append(f"{prefix}.{name[:-3]}")
    return sorted(packages), sorted(modules)


IMPORTING_PACKAGES = ("data_generators", "utils", "layers", "models")


def names_not_modules(root: str, library: list[str]) -> dict[str, list[str]]:
    """{module: names}: the top-level names a library module binds to something other than
    T2T's module of that last name (a def, a class, an assignment, another import: problems.py's
    ``problem`` function, ``flags`` from absl), where such a module exists."""
    short = {  # the last names of the modules of the importing packages
        m.rsplit(".", 1)[1]
        for m in library
        if m.count(".") == 2 and m.split(".")[1] in IMPORTING_PACKAGES
    }
    found = {}
    for module in library:
        relative = module.split(".")[1:]
        path = os.path.join(root, *relative) + ".py"
        if not os.path.isfile(path):
            path = os.path.join(root, *relative, "__init__.py")
        tree = ast.parse(open(path, encoding="utf-8").read())
        names = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    source = alias.name
                    if isinstance(node, ast.ImportFrom):
                        source = f"{node.module}.{alias.name}"
                    if not any(source == f"tensor2tensor.{p}.{bound}" for p in IMPORTING_PACKAGES):
                        names.add(bound)
        clash = sorted(names & short)
        if clash:
            found[module] = clash
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--t2t", required=True, help="the installed tensor2tensor package folder")
    parser.add_argument("--out", required=True, help="the JSON to write")
    args = parser.parse_args()
    packages, modules = module_names(args.t2t)
    everything = sorted(packages + modules)
    refused = [m for m in everything if m.split(".")[1:2] and m.split(".")[1] in REFUSED_PACKAGES]
    result = {
        "tensor2tensor": _installed_version(args.t2t),
        "library": [m for m in everything if m not in refused],
        "packages": [p for p in packages if p not in refused],
        "refused": refused,
    }
    result["names_not_modules"] = names_not_modules(args.t2t, result["library"])
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.out)
    print("wrote", args.out, {k: len(v) for k, v in result.items() if isinstance(v, list)})


if __name__ == "__main__":
    main()
