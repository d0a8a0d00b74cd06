"""Records tensor2tensor 1.15.7's own hparams sets (reference test data).

Calls T2T 1.15.7's registered hparams functions (``models/transformer.py`` and
``layers/common_hparams.py``) and writes what ``HParams.values()`` gives:

* ``sets``: every value of the sets named in ``SETS`` (the T2T names this project also
  registers, and T2T's relative-attention sets);
* ``added_names``: the hparams that T2T's other ``models/transformer.py`` sets add beyond
  ``transformer_base``, each with the first set (in registration order) that has it and its
  value there;
* ``decode_hparams``: T2T's decode hparams and their defaults (``utils/decoding.py``,
  ``decode_hparams``);

and, in ``t2t_1.15.7_transformer_sets.json``, every set that ``models/transformer.py``
registers (what ``--hparams_set`` names T2T has), one line a set: the values in which it
differs from ``transformer_base`` (``sets["transformer_base"]`` above), names it lacks under
``"-"``.

It must run in a virtualenv of its own with T2T 1.15.7, never in the project's (see README.md
here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_hparams_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_reference
"""

import argparse
import importlib.util
import json
import os

SETS = [
    "basic_1",
    "transformer_base_v1",
    "transformer_base_v2",
    "transformer_base_v3",
    "transformer_base",
    "transformer_big",
    "transformer_big_enfr",
    "transformer_base_single_gpu",
    "transformer_big_single_gpu",
    "transformer_tiny",
    "transformer_small",
    "transformer_test",
    "transformer_parsing_base",
    "transformer_parsing_big",
    "transformer_relative",
    "transformer_relative_tiny",
    "transformer_relative_big",
    "transformer_base_multistep8",
    "transformer_tall",
    "transformer_tall_pretrain_lm",
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder for the .json")
    return parser.parse_args()


def jsonable(value):
    """T2T's dict-valued hparams (modality functions) are empty in these sets."""
    if isinstance(value, dict):
        return {k: str(v) for k, v in value.items()}
    return value


def main():
    args = parse_args()
    spec = importlib.util.spec_from_file_location(
        "t2t_compat", os.path.join(os.path.abspath(args.shim), "t2t_compat.py")
    )
    t2t_compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t2t_compat)
    t2t_compat.install()
    import types

    import tensor2tensor
    import tensorflow as tf

    # models/__init__.py imports every model (RL, gym...): register the package bare.
    models = types.ModuleType("tensor2tensor.models")
    models.__path__ = [os.path.join(os.path.dirname(tensor2tensor.__file__), "models")]
    import sys

    sys.modules["tensor2tensor.models"] = models
    from tensor2tensor.layers import common_hparams  # noqa: F401  (registers basic_1)
    from tensor2tensor.models import transformer  # registers its sets
    from tensor2tensor.utils import registry

    def values(name):
        return {k: jsonable(v) for k, v in sorted(registry.hparams(name).values().items())}

    sets = {name: values(name) for name in SETS}
    base = set(sets["transformer_base"])
    added, every_set = {}, {}
    for name in registry.list_hparams():
        if getattr(getattr(transformer, name, None), "__module__", "") != transformer.__name__:
            continue  # registered by another module (T2T names a set after its function)
        try:
            hp = values(name)
        except Exception as e:  # a set needing a module the shim stubs
            print(f"skipped {name}: {type(e).__name__}: {e}")
            continue
        every_set[name] = hp
        for key, value in hp.items():
            if key not in base and key not in added:
                added[key] = {"set": name, "value": value}
    from tensor2tensor.utils import decoding

    out = {
        "sets": sets,
        "added_names": dict(sorted(added.items())),
        "decode_hparams": decoding.decode_hparams().values(),
        "versions": {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__},
    }
    path = os.path.join(args.out, "t2t_1.15.7_hparams.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path}: {len(sets)} sets, {len(added)} added names")
    path = os.path.join(args.out, "t2t_1.15.7_transformer_sets.json")
    base_values = sets["transformer_base"]

    def diff(hp):
        out = {k: v for k, v in hp.items() if k not in base_values or base_values[k] != v}
        missing = sorted(set(base_values) - set(hp))
        return {**out, "-": missing} if missing else out

    lines = [
        f"{json.dumps(n)}: {json.dumps(diff(v), sort_keys=True)}"
        for n, v in sorted(every_set.items())
    ]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path}: {len(every_set)} sets")


if __name__ == "__main__":
    main()
