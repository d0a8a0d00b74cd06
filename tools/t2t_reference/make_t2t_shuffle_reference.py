"""How tensor2tensor 1.15.7 deals and shuffles examples into shards (reference test data).

Runs T2T's own ``data_generators/generator_utils.py``: ``generate_files`` into
``-unshuffled-`` train (3 shards), dev (1) and test (1) files, then ``shuffle_dataset`` of
all five in order, with ``random.seed(429459)`` before (``bin/t2t_datagen.py,
set_random_seed``), in two layouts: one stream per split (``is_generate_per_split``) and one
stream dealt over all five files (how T2T splits one corpus). Example ``k`` of a stream is
``{"inputs": [k + 2, 1], "targets": [k + 1000, 1]}``, so a shard's order is the list of its
``inputs[0] - 2``. Writes ``<out>`` (JSON): each layout's example ids per final shard.

``tests/test_t2t_shards.py`` checks the project's datagen engine against it. It must run in a
virtualenv of its own with T2T 1.15.7, never in the project's (README.md here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_shuffle_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_reference/t2t_1.15.7_shuffle.json
"""

import argparse
import json
import os
import random
import sys
import tempfile

SEED = 429459
SPLITS = {"train": 3, "dev": 1, "test": 1}
EXAMPLES = {"train": 37, "dev": 11, "test": 5}


def cases(n: int):
    for k in range(n):
        yield {"inputs": [k + 2, 1], "targets": [k + 1000, 1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf
    from tensor2tensor.data_generators import generator_utils

    def ids(path: str) -> list[int]:
        out = []
        for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
            feature = tf.train.Example.FromString(record).features.feature
            out.append(feature["inputs"].int64_list.value[0] - 2)
        return out

    reference = {"seed": SEED, "shards": SPLITS, "examples": EXAMPLES, "layouts": {}}
    for layout in ("per_split", "one_stream"):
        work = tempfile.mkdtemp()
        paths = {
            split: [
                os.path.join(work, f"p-unshuffled-{split}-{i:05d}-of-{n:05d}") for i in range(n)
            ]
            for split, n in SPLITS.items()
        }
        everything = [p for split in SPLITS for p in paths[split]]
        random.seed(SEED)
        if layout == "per_split":
            for split in SPLITS:
                generator_utils.generate_files(cases(EXAMPLES[split]), paths[split])
        else:
            generator_utils.generate_files(cases(sum(EXAMPLES.values())), everything)
        generator_utils.shuffle_dataset(everything)
        reference["layouts"][layout] = {
            os.path.basename(p).replace("-unshuffled", ""): ids(p.replace("-unshuffled", ""))
            for p in everything
        }
    reference["versions"] = {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
