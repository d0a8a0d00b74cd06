"""What tensor2tensor 1.15.7's default on-the-fly packing gives: ``use_custom_ops=True``, its
compiled ``pack_sequences2`` op (reference test data for ``t2t_repro/data/custom_op_packing.py``;
``tests/test_custom_op_packing.py`` compares with it).

T2T's ``Problem.dataset`` with ``pack_dataset=True`` calls ``generator_utils.pack_dataset(...,
use_custom_ops=hparams.get("use_custom_ops", False))``; ``basic_params1`` has
``use_custom_ops=True``, so T2T packs with ``_pack_with_custom_ops``, whose op
``pack_sequences_ops.pack_sequences2`` the 1.15.7 wheel does not ship. This script compiles the
op's public C++ source of that time, ``tensor2tensor/data_generators/ops/pack_sequences_ops.cc``
at commit 15ea434070b341e36b356ff7224ba7d247cac8a4 ("Bump T2T to 1.15.7", 2020-06-17, tag
v1.15.7; the file last changed in f23d147, 2019-09-12, which widened the op's window of rows
from 10 to 1000, and next in 51256a2, 2021-05-03), loads it with
``tf.load_op_library``, injects it as the module ``tensor2tensor.data_generators.ops.
pack_sequences_ops`` and runs T2T's own ``pack_dataset(..., use_custom_ops=True)`` in TF1
graph mode, as T2T ran, on crafted datasets. Writes ``<out>/<case>.json`` (the examples,
``length``, ``keys`` and T2T's packed examples with their dtypes; the one large case keeps its
examples as ``[id, count]`` runs and, of its output, a sha256 and three rows) and
``<out>/errors.json`` (the calls T2T refuses, and the exception class). It first checks the
op against the expected values of T2T's own ``pack_sequences_ops_test.py``.

Compiling (TensorFlow 2.21 of T2T's venv; build products outside the repo). The 1.15.7 source
needs three edits that change no behaviour, made by ``_portable``: its include paths start with
Google's ``third_party/`` (dropped); ``Status::OK()`` is gone from TF (``OkStatus()``, the edit
T2T itself made in e18775d, 2022); the unqualified ``int64``/``int32`` are no longer exported by
TF (aliased to ``std::int64_t``/``std::int32_t``)::

    C=15ea434070b341e36b356ff7224ba7d247cac8a4
    git -C <tensor2tensor clone> show \\
        $C:tensor2tensor/data_generators/ops/pack_sequences_ops.cc \\
        > /tmp/s60/packop/pack_sequences_ops_1.15.7.cc
    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_custom_pack_reference.py \\
        --shim=/work/shared/t2t_shim --cc=/tmp/s60/packop/pack_sequences_ops_1.15.7.cc \\
        --build_dir=/tmp/s60/packop --out=tests/data/t2t_custom_pack_reference

which runs (the flags are ``tf.sysconfig.get_compile_flags()`` and ``get_link_flags()``)::

    g++ -std=c++17 -shared -fPIC -O2 -w pack_sequences_ops_build.cc -o _pack_sequences_ops.so \\
        -I<site-packages>/tensorflow/include -D_GLIBCXX_USE_CXX11_ABI=1 --std=c++17 \\
        -DEIGEN_MAX_ALIGN_BYTES=64 -L<site-packages>/tensorflow -l:libtensorflow_framework.so.2
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import types

SEED = 1715
COMMIT = "15ea434070b341e36b356ff7224ba7d247cac8a4"
# T2T's pack_sequences_ops_test.py (1.15.7): inputs, targets, max_length and the six outputs.
T2T_OP_TEST = {
    "args": ([[1, 2, 3], [4, 5, 0], [6, 0, 0]], [[10, 0, 0], [20, 30, 40], [50, 60, 0]], 5),
    "expected": [
        [[1, 2, 3, 4, 5], [6, 0, 0, 0, 0]],
        [[1, 1, 1, 2, 2], [1, 0, 0, 0, 0]],
        [[0, 1, 2, 0, 1], [0, 0, 0, 0, 0]],
        [[10, 20, 30, 40, 0], [50, 60, 0, 0, 0]],
        [[1, 2, 2, 2, 0], [1, 1, 0, 0, 0]],
        [[0, 0, 1, 2, 0], [0, 1, 0, 0, 0]],
    ],
}


def _portable(source: str) -> str:
    """The 1.15.7 source with the three build-only edits of the module docstring."""
    edits = [
        ('"third_party/tensorflow/', '"tensorflow/'),
        ("Status::OK()", "::tensorflow::OkStatus()"),
        (
            "using ::tensorflow::Tensor;\n",
            "using ::tensorflow::Tensor;\nusing int64 = ::std::int64_t;\n"
            "using int32 = ::std::int32_t;\n",
        ),
    ]
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return source


def _build(cc: str, build_dir: str, tf) -> str:
    """Compiles the op into ``build_dir``; returns the shared library's path."""
    os.makedirs(build_dir, exist_ok=True)
    with open(cc, encoding="utf-8") as f:
        source = _portable(f.read())
    src = os.path.join(build_dir, "pack_sequences_ops_build.cc")
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    so = os.path.join(build_dir, "_pack_sequences_ops.so")
    cmd = ["g++", "-std=c++17", "-shared", "-fPIC", "-O2", "-w", src, "-o", so]
    cmd += tf.sysconfig.get_compile_flags() + tf.sysconfig.get_link_flags()
    print(" ".join(cmd))
    subprocess.run(cmd, check=True)
    return so


def _seq(rng: random.Random, low: int, high: int, zero_share: float = 0.0) -> list[int]:
    return [
        0 if rng.random() < zero_share else rng.randint(1, 30)
        for _ in range(rng.randint(low, high))
    ]


def _examples(n: int, low: int, high: int, zero_share: float, seed: int, lm: bool = False):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ex = {"inputs": [] if lm else _seq(rng, low, high, zero_share)}
        ex["targets"] = _seq(rng, low, high, zero_share)
        out.append(ex)
    return out


def _cases() -> dict[str, dict]:
    """Each case: examples (dicts of int lists; ints for scalar keys), length and keys."""
    io = ["inputs", "targets"]
    docstring = [
        {"inputs": [8, 7, 1], "targets": [4, 1]},
        {"inputs": [2, 3, 4, 1], "targets": [5, 6, 1]},
    ]
    # Longer than length, empty sequences, zeros inside and at the end (the op counts non-zero
    # ids but copies a prefix), an example that fits only an earlier row.
    quirks = [
        {"inputs": [8, 7, 1], "targets": [4, 1]},
        {"inputs": [5] * 12, "targets": [3]},
        {"inputs": [], "targets": []},
        {"inputs": [], "targets": [9, 9]},
        {"inputs": [7, 0, 7], "targets": []},
        {"inputs": [0, 0, 4], "targets": [2, 0]},
        {"inputs": [6] * 10, "targets": [6] * 10},
        {"inputs": [3], "targets": [4]},
        {"inputs": [2], "targets": [2] * 11},
        {"inputs": [], "targets": []},
        {"inputs": [1, 2], "targets": [3, 0, 0, 5]},
    ]
    # 1003 ids a row: row 0 keeps room, the 1001 full examples after it push it out of the op's
    # window of the last 1000 rows, so the last small example opens a new row.
    window = [{"inputs": [4], "targets": [5]}]
    window += [{"inputs": [(i % 29) + 1] * 1003, "targets": [7]} for i in range(1001)]
    window += [{"inputs": [9, 9], "targets": [8]}]
    extra = _examples(30, 0, 7, 0.0, SEED + 6)
    for i, ex in enumerate(extra):
        ex["example_id"] = i  # a key T2T does not pack (dropped)
        ex["weights"] = [1] * (i % 4)
    return {
        "docstring_l10": dict(examples=docstring, length=10, keys=io),
        "quirks_l10": dict(examples=quirks, length=10, keys=io),
        "several_batches_l8": dict(
            examples=_examples(70, 0, 10, 0.05, SEED + 1), length=8, keys=io
        ),
        "long_examples_l5": dict(examples=_examples(40, 3, 12, 0.0, SEED + 2), length=5, keys=io),
        "length_1": dict(examples=_examples(13, 0, 2, 0.0, SEED + 3), length=1, keys=io),
        "language_model_l12": dict(
            examples=_examples(50, 1, 9, 0.0, SEED + 4, lm=True), length=12, keys=io
        ),
        "keys_reversed_l6": dict(
            examples=_examples(20, 0, 6, 0.0, SEED + 5), length=6, keys=["targets", "inputs"]
        ),
        "extra_keys_l10": dict(examples=extra, length=10, keys=io),
        "zeros_inside_l7": dict(examples=_examples(30, 0, 9, 0.3, SEED + 7), length=7, keys=io),
        "window_l1003": dict(examples=window, length=1003, keys=io, digest_only=True),
    }


def runs(ids: list[int]) -> list[list[int]]:
    """``ids`` as ``[id, count]`` runs (the large case's examples, kept small)."""
    out: list[list[int]] = []
    for i in ids:
        if out and out[-1][0] == i:
            out[-1][1] += 1
        else:
            out.append([i, 1])
    return out


def digest(packed: dict, dtypes: dict) -> str:
    """sha256 of the packed examples for the large case: each key's rows, keys in sorted order,
    as C-order little-endian arrays of their dtype (``numpy.ndarray.tobytes``)."""
    import numpy as np

    h = hashlib.sha256()
    for k in sorted(packed):
        h.update(np.asarray(packed[k], dtype=np.dtype(dtypes[k]).newbyteorder("<")).tobytes())
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--cc", required=True, help="pack_sequences_ops.cc of T2T 1.15.7")
    parser.add_argument("--build_dir", required=True, help="where the op is compiled")
    parser.add_argument("--out", required=True, help="the folder of the JSON files to write")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf

    lib = tf.load_op_library(_build(args.cc, args.build_dir, tf))
    got = [t.numpy().tolist() for t in lib.pack_sequences2(*T2T_OP_TEST["args"], 5)]
    assert got == T2T_OP_TEST["expected"], got  # T2T's pack_sequences_ops_test.py
    tf.compat.v1.disable_v2_behavior()  # T2T 1.15 built its input pipeline in a graph
    tf1 = tf.compat.v1
    import tensor2tensor.data_generators as dg
    from tensor2tensor.data_generators import generator_utils

    ops = types.ModuleType("tensor2tensor.data_generators.ops")
    ops.__path__ = []
    ops.pack_sequences_ops = types.ModuleType(ops.__name__ + ".pack_sequences_ops")
    ops.pack_sequences_ops.pack_sequences2 = lib.pack_sequences2
    sys.modules[ops.__name__] = dg.ops = ops
    sys.modules[ops.pack_sequences_ops.__name__] = ops.pack_sequences_ops

    def run(dataset) -> list[dict]:
        nxt = tf1.data.make_one_shot_iterator(dataset).get_next()
        out = []
        with tf1.Session() as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out

    def pack(case: dict, dtype=tf.int64, **overrides):
        first = case["examples"][0] if case["examples"] else {"inputs": [], "targets": []}
        dtypes = {k: dtype if isinstance(v, list) else tf.int64 for k, v in first.items()}
        shapes = {k: [None] if isinstance(v, list) else [] for k, v in first.items()}
        dataset = tf1.data.Dataset.from_generator(
            lambda: iter(case["examples"]), output_types=dtypes, output_shapes=shapes
        )
        kwargs = dict(length=case["length"], keys=case["keys"], use_custom_ops=True)
        kwargs.update(overrides)
        packed = generator_utils.pack_dataset(dataset, **kwargs)
        return packed, {k: v.name for k, v in sorted(tf1.data.get_output_types(packed).items())}

    os.makedirs(args.out, exist_ok=True)
    cases = _cases()
    cases["no_examples_l4"] = dict(examples=[], length=4, keys=["inputs", "targets"])
    for name, case in cases.items():
        dataset, dtypes = pack(case)
        rows = run(dataset)
        packed = {k: [r[k].tolist() for r in rows] for k in dtypes}
        for r in rows:
            assert {k: v.dtype.name for k, v in r.items()} == dtypes, name
        record = dict(case, packed_dtypes=dtypes, num_packed=len(rows), t2t_commit=COMMIT)
        record["versions"] = {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__}
        if case.get("digest_only"):
            del record["examples"]
            record["examples_runs"] = [
                {k: runs(v) for k, v in ex.items()} for ex in case["examples"]
            ]
            record["packed_sha256"] = digest(packed, dtypes)
            record["packed_rows"] = {
                str(i): {k: v[i] for k, v in packed.items()} for i in (0, 1, len(rows) - 1)
            }
        else:
            record["packed"] = packed
        with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(record, f, separators=(",", ":"), sort_keys=True)
            f.write("\n")
        print(name, len(case["examples"]), "examples ->", len(rows), "packed")

    # The calls T2T refuses (at the call, or when the dataset runs).
    base = cases["docstring_l10"]
    attempts = {
        "int32_tokens": dict(dtype=tf.int32),
        "one_key": dict(keys=["targets"]),
        "three_keys": dict(keys=["inputs", "targets", "inputs"]),
        "missing_key": dict(keys=["inputs", "weights"]),
    }
    errors = {}
    for name, overrides in attempts.items():
        try:
            run(pack(base, **overrides)[0])
            errors[name] = None
        except Exception as e:  # noqa: BLE001 - the class is what is recorded
            errors[name] = type(e).__name__
    with open(os.path.join(args.out, "errors.json"), "w", encoding="utf-8") as f:
        json.dump(errors, f, indent=1, sort_keys=True)
        f.write("\n")
    print("errors", errors)


if __name__ == "__main__":
    main()
