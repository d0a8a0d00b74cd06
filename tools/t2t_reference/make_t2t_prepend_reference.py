"""Records T2T 1.15.7's ``preprocess_example_common`` with ``prepend_mode`` (reference data).

T2T's transformer reads ``prepend_mode`` only there (``data_generators/problem.py``): any value
but "none" makes the targets the inputs, a 0 and the targets in training and evaluation, and
gives ``partial_targets`` (the inputs and a 0) in PREDICT mode, between the inputs' and the
targets' truncations. This runs T2T's own function on crafted examples, in its venv
(README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_prepend_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_reference/t2t_1.15.7_prepend_mode.json
"""

import argparse
import json
import sys

PAIR = {"inputs": [3, 4, 5, 1], "targets": [6, 7, 1]}
CASES = [
    # (name, example, mode, prepend_mode, max_input_seq_length, max_target_seq_length)
    ("train", PAIR, "train", "prepend_inputs_masked_attention", 0, 0),
    ("eval", PAIR, "eval", "prepend_inputs_masked_attention", 0, 0),
    ("infer", PAIR, "infer", "prepend_inputs_masked_attention", 0, 0),
    ("full_attention", PAIR, "train", "prepend_inputs_full_attention", 0, 0),
    ("any_other_value", PAIR, "train", "yes", 0, 0),
    ("none", PAIR, "train", "none", 0, 0),
    ("truncated", PAIR, "train", "prepend_inputs_masked_attention", 2, 5),
    ("truncated_infer", PAIR, "infer", "prepend_inputs_masked_attention", 2, 2),
    ("no_inputs", {"targets": [6, 7, 1]}, "train", "prepend_inputs_masked_attention", 0, 0),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()
    sys.path.insert(0, args.shim)
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf
    from tensor2tensor.data_generators import problem

    out = {}
    for name, example, mode, prepend, max_inputs, max_targets in CASES:
        hparams = problem.default_model_hparams()
        hparams.prepend_mode = prepend
        hparams.max_input_seq_length = max_inputs
        hparams.max_target_seq_length = max_targets
        record = {"case": example, "mode": mode, "prepend_mode": prepend}
        record.update(max_input_seq_length=max_inputs, max_target_seq_length=max_targets)
        features = {k: tf.constant(v, tf.int64) for k, v in example.items()}
        try:
            got = problem.preprocess_example_common(features, mode, hparams)
            record["example"] = {k: v.numpy().tolist() for k, v in sorted(got.items())}
        except KeyError as error:
            record["error"] = f"KeyError: {error}"
        out[name] = record
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: v.get("error") or v["example"] for k, v in out.items()}))


if __name__ == "__main__":
    main()
