"""Records T2T 1.15.7's ``split_targets_chunk_length`` (reference data).

T2T reads the hparam only in ``utils/data_reader.py``, ``input_fn``: after the length buckets
(and ``batch_shuffle_size``) each batch's targets are padded to ``split_targets_chunk_length *
split_targets_max_chunks``, cut into that many chunks, each a batch with the other features
repeated and a ``chunk_number`` feature, and chunks whose targets are all 0 are dropped. This
runs T2T's own ``input_fn`` on a dataset of crafted examples, in EVAL mode (no shuffling), in
its venv (README.md here), and writes each batch it gives (``chunk_number`` and the 4-D shapes
dropped, as ids), and what T2T raises for targets longer than the chunks hold and for
``split_targets_strided_training`` in training::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_target_chunks_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_reference/t2t_1.15.7_target_chunks.json
"""

import argparse
import json
import sys

EXAMPLES = [
    {"inputs": [3, 4, 5, 1], "targets": [6, 7, 8, 9, 10, 1]},
    {"inputs": [5, 1], "targets": [2, 1]},
    {"inputs": [7, 8, 9, 1], "targets": [4, 4, 4, 4, 4, 4, 4, 1]},
    {"inputs": [9, 1], "targets": [3, 5, 1]},
    {"inputs": [2, 2, 2, 2, 2, 2, 1], "targets": [7, 1]},
    {"inputs": [6, 5, 4, 1], "targets": [0, 0, 0, 8, 1]},
    {"inputs": [8, 8, 1], "targets": [5, 6, 7, 1]},
]
TOO_LONG = [{"inputs": [3, 1], "targets": [5] * 12 + [1]}]
HPARAMS = {
    "batch_size": 24,
    "max_length": 0,
    "min_length_bucket": 8,
    "length_bucket_step": 1.1,
    "split_targets_chunk_length": 3,
    "split_targets_max_chunks": 4,
}


def batches(tf, examples, mode, **overrides):
    """T2T's input_fn batches of ``examples`` as id lists, or the error it raises."""
    from tensor2tensor.models import transformer
    from tensor2tensor.utils import data_reader

    hparams = transformer.transformer_tiny()
    for name, value in {**HPARAMS, **overrides}.items():
        setattr(hparams, name, value)

    def generate():
        for example in examples:
            yield {k: tf.constant(v, tf.int64) for k, v in example.items()}

    spec = {k: tf.TensorSpec([None], tf.int64) for k in ("inputs", "targets")}
    dataset = tf.data.Dataset.from_generator(generate, output_signature=spec)
    try:
        found = data_reader.input_fn(dataset, None, False, True, 1, 0, mode, hparams)
        out = []
        for features, _ in found:
            ids = lambda v: v.numpy().reshape(v.shape[:2]).tolist()  # noqa: E731
            out.append({k: ids(v) for k, v in sorted(features.items()) if k != "chunk_number"})
        return {"batches": out}
    except Exception as error:  # noqa: BLE001 (recorded: what T2T raises)
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0]}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()
    sys.path.insert(0, args.shim)
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf

    modes = tf.estimator.ModeKeys
    out = {
        "examples": EXAMPLES,
        "hparams": HPARAMS,
        "eval": batches(tf, EXAMPLES, modes.EVAL),
        "eval_unchunked": batches(tf, EXAMPLES, modes.EVAL, split_targets_chunk_length=0),
        "too_long": {"examples": TOO_LONG, **batches(tf, TOO_LONG, modes.EVAL)},
        "strided_training": batches(tf, EXAMPLES, modes.TRAIN, split_targets_strided_training=True),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: v for k, v in out.items() if k != "examples"})[:3000])


if __name__ == "__main__":
    main()
