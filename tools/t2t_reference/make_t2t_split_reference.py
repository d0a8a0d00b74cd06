"""Records T2T 1.15.7's ``preprocess_example_common`` with ``split_to_length`` (reference data).

T2T cuts each example's ``inputs`` and ``targets`` into examples of ``split_to_length`` ids
(``data_generators/problem.py``: a reshape to [-1, split_to_length, 1, 1], then one example
a row; other features dropped), after its truncations. This runs T2T's own function on a few
crafted examples, in its venv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_split_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_reference/t2t_1.15.7_split_to_length.json
"""

import argparse
import json
import sys

CASES = [
    # (name, example, split_to_length, max_input_seq_length, max_target_seq_length)
    ("language_model", {"targets": list(range(1, 13))}, 4, 0, 0),
    ("pairs", {"inputs": list(range(1, 7)), "targets": list(range(11, 17)), "extra": [5]}, 3, 0, 0),
    ("truncated_first", {"inputs": list(range(1, 10)), "targets": list(range(11, 20))}, 3, 6, 6),
    ("not_divisible", {"targets": list(range(1, 8))}, 3, 0, 0),
    ("unequal_rows", {"inputs": list(range(1, 7)), "targets": list(range(11, 14))}, 3, 0, 0),
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

    tf.compat.v1.disable_eager_execution()
    out = {}
    for name, example, length, max_inputs, max_targets in CASES:
        hparams = problem.default_model_hparams()
        hparams.split_to_length = length
        hparams.max_input_seq_length = max_inputs
        hparams.max_target_seq_length = max_targets
        record = {"case": example, "split_to_length": length}
        record.update(max_input_seq_length=max_inputs, max_target_seq_length=max_targets)
        try:
            with tf.Graph().as_default():
                features = {k: tf.constant(v, tf.int64) for k, v in example.items()}
                dataset = problem.preprocess_example_common(features, "train", hparams)
                item = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
                rows = []
                with tf.compat.v1.Session() as sess:
                    while True:
                        try:
                            got = sess.run(item)
                        except tf.errors.OutOfRangeError:
                            break
                        rows.append({k: v.reshape(-1).tolist() for k, v in sorted(got.items())})
            record["examples"] = rows
        except (tf.errors.InvalidArgumentError, ValueError) as error:
            record["error"] = type(error).__name__
        out[name] = record
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: v.get("error") or len(v["examples"]) for k, v in out.items()}))


if __name__ == "__main__":
    main()
