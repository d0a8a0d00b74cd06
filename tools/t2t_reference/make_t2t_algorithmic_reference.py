"""What tensor2tensor 1.15.7's algorithmic problems generate (reference test data for
``t2t_repro/t2t_compat/algorithmic.py``).

For each of T2T's 19 registered problems of ``data_generators/algorithmic.py`` and
``cipher.py``: its first 6 train cases after ``np.random.seed(429459)`` (``t2t_datagen``'s
seed), its problem hparams (vocab sizes, space ids) and ``eval_metrics()``. Then the records its
``generate_data`` writes (each shard's record count and the sha256 of the records' ids), seeded
as ``bin/t2t_datagen.py`` seeds, for ``algorithmic_reverse_binary40_test`` and ``tiny_algo`` as
registered, and for ``algorithmic_addition_decimal40`` and ``algorithmic_sort_problem`` with 300
train and 40 dev cases and ``algorithmic_cipher_vigenere5`` with 30 and 6 (a subclass that sets
``train_size``/``dev_size``: their 10 shards written round-robin without T2T's 110,000 cases).
In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_algorithmic_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_1.15.7_algorithmic.json
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
FIRST_CASES = 6
SMALL = {
    "algorithmic_addition_decimal40": (300, 40),
    "algorithmic_sort_problem": (300, 40),
    "algorithmic_cipher_vigenere5": (30, 6),
}


def shard_ids(tf, path: str) -> list:
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def datagen(tf, np, problem) -> dict:
    """``problem.generate_data`` seeded as bin/t2t_datagen.py; its records by shard."""
    data_dir = tempfile.mkdtemp()
    tf.compat.v1.set_random_seed(SEED)
    random.seed(SEED)
    np.random.seed(SEED)
    problem.generate_data(data_dir, None)
    records = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in sorted(os.listdir(data_dir))}
    shutil.rmtree(data_dir)
    return {
        "records": {f: len(r) for f, r in records.items()},
        "records_sha256": {
            f: hashlib.sha256(json.dumps(r, separators=(",", ":")).encode()).hexdigest()
            for f, r in records.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import algorithmic, cipher  # noqa: F401
    from tensor2tensor.utils import registry

    names = sorted(
        n
        for n in registry.list_base_problems()
        if isinstance(registry.problem(n), algorithmic.AlgorithmicProblem)
    )
    summary = {"random_seed": SEED, "problems": {}, "datagen": {}}
    for name in names:
        problem = registry.problem(name)
        np.random.seed(SEED)
        generator = problem.generator(problem.num_symbols, problem.train_length, FIRST_CASES)
        cases = [{k: [int(i) for i in v] for k, v in case.items()} for case in generator]
        hparams = problem.get_hparams()
        summary["problems"][name] = {
            "first_train_cases": cases,
            "vocab_size": dict(hparams.vocab_size),
            "input_space_id": int(hparams.input_space_id),
            "target_space_id": int(hparams.target_space_id),
            "eval_metrics": list(problem.eval_metrics()),
            "sizes": [problem.train_length, problem.dev_length, problem.num_shards],
        }
    for name in ("algorithmic_reverse_binary40_test", "tiny_algo"):
        summary["datagen"][name] = datagen(tf, np, registry.problem(name))
    for name, (train, dev) in SMALL.items():
        base = type(registry.problem(name))
        small = type("Small", (base,), {"train_size": train, "dev_size": dev})
        small.name = name
        summary["datagen"][f"{name}:{train}:{dev}"] = datagen(tf, np, small())
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", args.out, len(names), "problems")


if __name__ == "__main__":
    main()
