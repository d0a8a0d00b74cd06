"""Records the model and problem names T2T 1.15.7 registers (reference data for the T2T edge).

Reads the installed ``tensor2tensor`` package's source with ``ast`` (nothing of T2T is
imported but ``utils/misc_utils.py``, loaded on its own for T2T's naming rule): each class
decorated with ``@registry.register_model`` registers under T2T's ``registry.default_name``,
``misc_utils.camelcase_to_snakecase`` of the class name (T2T 1.15 passes no explicit name).
``--model=lstm_seq2seq_attention`` (google-research's CFQ usr_dir's own command) then says
it is T2T's model, not provided here, instead of "Unknown model"
(``t2t_repro/t2t_compat/t2t_models.py``); ``@registry.register_problem`` classes likewise give
the problem names (``t2t_repro/t2t_compat/t2t_problems.py``).

Usage (README.md here)::

    python tools/t2t_reference/list_t2t_models.py \
        --t2t=/work/venv-t2t/lib/python3.11/site-packages/tensor2tensor \
        --out=tests/data/t2t_1.15.7_models.json
"""

import argparse
import ast
import importlib.util
import json
import os

from list_t2t_modules import module_names
from list_t2t_public_names import _installed_version


def _t2t_naming_rule(root: str):
    spec = importlib.util.spec_from_file_location(
        "t2t_misc_utils", os.path.join(root, "utils", "misc_utils.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.camelcase_to_snakecase


def _registers(decorator: ast.expr, kind: str) -> bool:
    """``@registry.register_<kind>``, with or without its empty call."""
    return ast.unparse(decorator) in (f"registry.register_{kind}", f"registry.register_{kind}()")


def registered_models(root: str, kind: str = "model") -> dict[str, str]:
    """{name: module} of every class ``@registry.register_<kind>`` decorates (``model`` or
    ``problem``)."""
    to_name = _t2t_naming_rule(root)
    packages, modules = module_names(root)
    found = {}
    for module in packages + modules:
        parts = module.split(".")[1:]
        is_package = module in packages
        path = os.path.join(root, *parts, "__init__.py") if is_package else None
        path = path or os.path.join(root, *parts[:-1], parts[-1] + ".py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                _registers(d, kind) for d in node.decorator_list
            ):
                found[to_name(node.name)] = module
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--t2t", required=True, help="the installed tensor2tensor package folder")
    parser.add_argument("--out", required=True, help="the JSON to write")
    args = parser.parse_args()
    result = {
        "tensor2tensor": _installed_version(args.t2t),
        "models": registered_models(args.t2t),
        "problems": registered_models(args.t2t, "problem"),
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.out)
    print("wrote", args.out, len(result["models"]), "models", len(result["problems"]), "problems")


if __name__ == "__main__":
    main()
