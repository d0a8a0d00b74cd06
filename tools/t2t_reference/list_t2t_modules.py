"""Records every module of T2T 1.15.7's wheel (reference test data for the T2T edge).

Walks the installed ``tensor2tensor`` package folder (nothing is imported) and lists each
module by its import name: ``tensor2tensor.models.lstm``, a package by its folder's name
(``tensor2tensor.models`` for ``models/__init__.py``). Tests (``*_test.py``) are left out.
``library`` holds the modules a usr_dir may import (``models``, ``data_generators``,
``layers``, ``utils``, ``metrics``, ``serving``, ``visualization``, ``problems``...);
``refused`` the scripts of ``bin/`` and the ``rl``, ``envs`` and ``insights`` packages, which
the edge refuses in one line at import. ``tests/test_t2t_modules.py`` checks that the edge
(``t2t_repro/t2t_compat/t2t_modules.py``) lists exactly these and that each imports.

Usage (README.md here)::

    python tools/t2t_reference/list_t2t_modules.py \
        --t2t=/work/venv-t2t/lib/python3.11/site-packages/tensor2tensor \
        --out=tests/data/t2t_1.15.7_modules.json
"""

import argparse
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
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.out)
    print("wrote", args.out, {k: len(v) for k, v in result.items() if isinstance(v, list)})


if __name__ == "__main__":
    main()
