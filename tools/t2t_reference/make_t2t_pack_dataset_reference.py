"""What tensor2tensor 1.15.7's on-the-fly packing gives (reference test data for
``t2t_repro/data/dataset_packing.py``; ``tests/test_pack_dataset.py`` compares with it).

Runs T2T's own ``data_generators/generator_utils.pack_dataset(dataset, length, keys,
use_custom_ops=False)`` (what ``Problem.dataset`` calls with hparam ``pack_dataset=True``) in
TF1 graph mode, as T2T ran, on crafted datasets: several lengths, sequences longer than
``length``, empty ones, zeros inside sequences, int32 and int64 tokens, a targets-only dataset,
extra keys, ``keys=None``, and enough examples for several packing windows (T2T packs each window
of ``int(length * 12.5)`` input examples on its own). Writes ``<out>/<case>.json`` (the
examples, ``length``, ``keys`` and T2T's packed examples with their dtypes) and
``<out>/errors.json`` (the calls T2T refuses, and the exception it raises).

T2T's packing sets ``experimental_deterministic=False`` (its interleave of the windows and its
parallel map of the packed bins): its order may vary between runs. Each case is packed twice:
once as T2T leaves it, and once with ``tf.data.Options.deterministic=True`` set on T2T's output
(T2T's own pipeline, in order: window 0's bins, window 1's...); the script checks both give the
same packed examples (as multisets) and records the second.
``use_custom_ops=True`` cannot run: the 1.15.7 wheel has no ``data_generators/ops`` package
(its ``pack_sequences_ops`` C++ op), so T2T raises ``ModuleNotFoundError`` (recorded).

In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_pack_dataset_reference.py \\
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_pack_dataset_reference
"""

import argparse
import json
import os
import random
import sys

SEED = 1157


def _seq(rng: random.Random, low: int, high: int, zero_share: float = 0.0) -> list[int]:
    """A sequence of ``low..high`` tokens in 1..30 (a few zeros when ``zero_share``)."""
    return [
        0 if rng.random() < zero_share else rng.randint(1, 30)
        for _ in range(rng.randint(low, high))
    ]


def _examples(n: int, keys: list[str], low: int, high: int, zero_share: float, seed: int):
    rng = random.Random(seed)
    return [{k: _seq(rng, low, high, zero_share) for k in keys} for _ in range(n)]


def _cases() -> dict[str, dict]:
    """Each case: examples (dicts of int lists, or ints for scalars), length, keys, dtypes."""
    io_keys = ["inputs", "targets"]
    docstring = [
        {"inputs": [8, 7, 1], "targets": [4, 1]},
        {"inputs": [2, 3, 4, 1], "targets": [5, 6, 1]},
    ]
    # Empty sequences beside non-empty ones (T2T's start marks then count twice: see module).
    quirks = [
        {"inputs": [8, 7, 1], "targets": [4, 1]},
        {"inputs": [2, 3, 4, 1], "targets": [5, 6, 1]},
        {"inputs": [5] * 12, "targets": [3]},
        {"inputs": [], "targets": []},
        {"inputs": [], "targets": [9, 9]},
        {"inputs": [3], "targets": [4]},
        {"inputs": [7, 0, 7], "targets": []},
        {"inputs": [6] * 10, "targets": [6] * 10},
        {"inputs": [], "targets": []},
        {"inputs": [2], "targets": [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]},
    ]
    extra = _examples(40, io_keys + ["weights"], 0, 7, 0.0, SEED + 6)
    for i, ex in enumerate(extra):
        ex["example_id"] = i  # a scalar key: T2T drops the keys it does not pack
    return {
        "docstring_l10": dict(examples=docstring, length=10, keys=io_keys, dtype="int64"),
        "quirks_l10": dict(examples=quirks, length=10, keys=io_keys, dtype="int64"),
        "one_window_l8": dict(
            examples=_examples(90, io_keys, 0, 10, 0.05, SEED + 1),
            length=8,
            keys=io_keys,
            dtype="int64",
        ),
        "three_windows_l5": dict(
            examples=_examples(150, io_keys, 0, 6, 0.05, SEED + 2),
            length=5,
            keys=io_keys,
            dtype="int64",
        ),
        "length_1": dict(
            examples=_examples(40, io_keys, 0, 2, 0.0, SEED + 3),
            length=1,
            keys=io_keys,
            dtype="int64",
        ),
        "twelve_windows_l2": dict(
            examples=_examples(290, io_keys, 0, 3, 0.0, SEED + 9),
            length=2,
            keys=io_keys,
            dtype="int64",
        ),
        "int32_l3": dict(
            examples=_examples(60, io_keys, 1, 3, 0.0, SEED + 4),
            length=3,
            keys=io_keys,
            dtype="int32",
        ),
        "two_windows_l16": dict(
            examples=_examples(260, io_keys, 1, 18, 0.02, SEED + 5),
            length=16,
            keys=io_keys,
            dtype="int64",
        ),
        "targets_only_l16": dict(
            examples=_examples(120, ["targets"], 1, 12, 0.0, SEED + 7),
            length=16,
            keys=["targets"],
            dtype="int32",
        ),
        "extra_keys_l10": dict(examples=extra, length=10, keys=io_keys, dtype="int64"),
        "keys_none_l6": dict(
            examples=_examples(50, ["inputs", "targets", "extra"], 0, 5, 0.0, SEED + 8),
            length=6,
            keys=None,
            dtype="int64",
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the folder of the JSON files to write")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()  # T2T 1.15 built its input pipeline in a graph
    tf1 = tf.compat.v1
    from tensor2tensor.data_generators import generator_utils

    def make_dataset(examples: list[dict], dtypes: dict, shapes: dict):
        return tf1.data.Dataset.from_generator(
            lambda: iter(examples), output_types=dtypes, output_shapes=shapes
        )

    def run(dataset) -> list[dict]:
        nxt = tf1.data.make_one_shot_iterator(dataset).get_next()
        out = []
        with tf1.Session() as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out

    def pack(case: dict, **overrides):
        dtype = getattr(tf, case["dtype"])
        first = case["examples"][0]
        dtypes = {k: dtype if isinstance(v, list) else tf.int64 for k, v in first.items()}
        shapes = {k: [None] if isinstance(v, list) else [] for k, v in first.items()}
        dtypes.update(overrides.pop("dtypes", {}))
        shapes.update(overrides.pop("shapes", {}))
        dataset = make_dataset(case["examples"], dtypes, shapes)
        kwargs = dict(length=case["length"], keys=case["keys"], use_custom_ops=False)
        kwargs.update(overrides)
        return generator_utils.pack_dataset(dataset, **kwargs)

    os.makedirs(args.out, exist_ok=True)
    for name, case in _cases().items():
        packed = pack(case)
        as_t2t_leaves_it = run(packed)
        options = tf.data.Options()
        options.deterministic = True
        ordered = run(packed.with_options(options))

        def rows(packs):
            return sorted(
                json.dumps({k: v.tolist() for k, v in p.items()}, sort_keys=True) for p in packs
            )

        assert rows(as_t2t_leaves_it) == rows(ordered), name
        assert ordered, name
        record = dict(case)
        record["window_size"] = int(case["length"] / 8 * 10 * 10)  # T2T's _concurrent_pack
        record["packed"] = {k: [p[k].tolist() for p in ordered] for k in sorted(ordered[0])}
        record["packed_dtypes"] = {k: v.dtype.name for k, v in sorted(ordered[0].items())}
        shapes = tf1.data.get_output_shapes(packed)
        record["packed_shapes"] = {k: shapes[k].as_list() for k in sorted(shapes)}
        record["versions"] = {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__}
        with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(record, f, separators=(",", ":"), sort_keys=True)
            f.write("\n")
        print(name, len(case["examples"]), "examples ->", len(ordered), "packed")

    # The calls T2T refuses (at the call, or when the dataset runs).
    base = _cases()["docstring_l10"]
    attempts = {
        "use_custom_ops": dict(use_custom_ops=True),
        "missing_key": dict(keys=["inputs", "weights"]),
        "mixed_dtypes": dict(dtypes={"targets": tf.int32}),
        "two_dimensional": dict(shapes={"targets": [None, None]}),
        "length_0": dict(length=0),
        "minus_one_token": dict(length=10),
    }
    errors = {}
    for name, overrides in attempts.items():
        case = dict(base)
        if name == "minus_one_token":  # T2T's eviction sentinel is -1: its check refuses it
            case["examples"] = [{"inputs": [3, -1], "targets": [2]}]
        try:
            run(pack(case, **overrides))
            errors[name] = None
        except Exception as e:  # its class is what is recorded
            errors[name] = type(e).__name__
    with open(os.path.join(args.out, "errors.json"), "w", encoding="utf-8") as f:
        json.dump(errors, f, indent=1, sort_keys=True)
        f.write("\n")
    print("errors", errors)


if __name__ == "__main__":
    main()
