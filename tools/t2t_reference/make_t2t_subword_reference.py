"""The vocabulary tensor2tensor 1.15.7 builds to a target size (reference test data).

Runs T2T's own ``data_generators/tokenizer.py`` (``encode``) to count the tokens of the first
2,000 English and 2,000 German lines of Multi30k's train split, then
``data_generators/text_encoder.py`` ``SubwordTextEncoder.build_to_target_size(1000, counts,
1, 1000)`` (the arguments T2T's ``build_from_generator`` passes for a target size), and writes
``<out>`` (JSON): the lines used, the token count and T2T's subtoken strings in vocabulary
order. ``tests/test_text_encoder.py`` builds the same vocabulary with the project's tokenizer
and encoder and compares. It must run in a virtualenv of its own with T2T 1.15.7, never in
the project's (README.md here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_subword_reference.py \
        --shim=../shared/t2t_shim --multi30k=../shared/data/multi30k \
        --out=tests/data/t2t_reference/t2t_1.15.7_subword_target_size.json
"""

import argparse
import collections
import gzip
import json
import os
import sys

LINES = 2000
TARGET_SIZE = 1000


def first_lines(path: str, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--multi30k", required=True, help="the folder of train.en.gz, train.de.gz")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf
    from tensor2tensor.data_generators import text_encoder, tokenizer

    texts = [
        line
        for lang in ("en", "de")
        for line in first_lines(os.path.join(args.multi30k, f"train.{lang}.gz"), LINES)
    ]
    counts = collections.Counter(token for text in texts for token in tokenizer.encode(text))
    encoder = text_encoder.SubwordTextEncoder.build_to_target_size(TARGET_SIZE, counts, 1, 1e3)
    reference = {
        "lines_per_language": LINES,
        "languages": ["en", "de"],
        "target_size": TARGET_SIZE,
        "distinct_tokens": len(counts),
        "subtoken_strings": list(encoder.all_subtoken_strings),
        "versions": {"tensor2tensor": "1.15.7", "tensorflow": tf.__version__},
    }
    tmp = f"{args.out}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(reference, f, indent=0, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
