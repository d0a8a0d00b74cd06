"""Records T2T 1.15.7's public surface of the modules usr_dirs import (reference test data).

Reads each module's source with ``ast`` (T2T is not imported, so any Python runs it) and lists
its public top-level names, those not starting with ``_``, by kind: ``classes`` (``class``
statements, and ``collections.namedtuple`` types such as ``registry.ProblemSpec``),
``functions`` (``def`` statements, and callables bound by assignment: T2T's registry binds
``register_problem = register_base_problem``, ``list_models = lambda: ...``,
``hparams = Registries.hparams.__getitem__``) and ``constants`` (other assignments, by T2T's
convention in capitals: ``EOS_ID``, ``UNSHUFFLED_SUFFIX``), and ``values``: the value of each
constant bound to a literal (a string, a number, None). Names imported from other modules
are not the module's own and are not listed (``mlperf_log``'s tags are ``mlperf_tags``').
``tests/test_t2t_surface.py`` checks that every listed name exists in this project's T2T edge
(``t2t_repro/t2t_compat/``) with T2T's value when it is a literal, and that calling one the
edge does not provide raises one line.

Usage (README.md here)::

    python tools/t2t_reference/list_t2t_public_names.py \
        --t2t=/work/venv-t2t/lib/python3.11/site-packages/tensor2tensor \
        --out=tests/data/t2t_1.15.7_public_names.json
"""

import argparse
import ast
import json
import os

MODULES = [
    "utils.registry",
    "utils.hparam",
    "data_generators.problem",
    "data_generators.text_problems",
    "data_generators.translate",
    "data_generators.text_encoder",
    "data_generators.generator_utils",
    "data_generators.tokenizer",
    "models.transformer",
    "layers.common_hparams",
    "layers.modalities",
    "utils.metrics",
    "utils.t2t_model",
    "utils.mlperf_log",
    "utils.mlperf_tags",
    "utils.bleu_hook",
]


def _kind(name: str, value: ast.expr) -> str:
    """The kind of a name bound by a top-level assignment."""
    if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "namedtuple":
        return "classes"
    if name.isupper() or isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Call)):
        return "constants"
    return "functions"  # a lambda, or another callable's name or attribute


def public_names(source: str) -> dict:
    found: dict[str, set[str]] = {"classes": set(), "functions": set(), "constants": set()}
    values: dict = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            found["classes"].add(node.name)
        elif isinstance(node, ast.FunctionDef):
            found["functions"].add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[_kind(target.id, node.value)].add(target.id)
                    if isinstance(node.value, ast.Constant) and not target.id.startswith("_"):
                        values[target.id] = node.value.value
    names = {
        kind: sorted(n for n in names if not n.startswith("_")) for kind, names in found.items()
    }
    return {**names, "values": {n: values[n] for n in names["constants"] if n in values}}


def _installed_version(package: str) -> str:
    """The version in the installed distribution's metadata beside the package."""
    site = os.path.dirname(os.path.abspath(package))
    for entry in sorted(os.listdir(site)):
        if entry.startswith("tensor2tensor-") and entry.endswith(".dist-info"):
            with open(os.path.join(site, entry, "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
    raise SystemExit(f"no tensor2tensor distribution metadata beside {package}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--t2t", required=True, help="the installed tensor2tensor package folder")
    parser.add_argument("--out", required=True, help="the JSON to write")
    args = parser.parse_args()
    version = _installed_version(args.t2t)
    modules = {}
    for module in MODULES:
        path = os.path.join(args.t2t, *module.split(".")) + ".py"
        with open(path, encoding="utf-8") as f:
            modules["tensor2tensor." + module] = public_names(f.read())
    result = {"tensor2tensor": version, "modules": modules}
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.out)
    kinds = ("classes", "functions", "constants")
    counts = {m: sum(len(k[kind]) for kind in kinds) for m, k in modules.items()}
    print("wrote", args.out, counts)


if __name__ == "__main__":
    main()
