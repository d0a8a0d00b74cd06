"""What tensor2tensor 1.15.7's datagen writes for its own ``wsj_parsing`` (reference test data).

T2T's ``WsjParsing`` reads trees (one a line, ``TOP`` root) from ``wsjTrain.trees`` and
``wsjEval.trees`` in ``--tmp_dir``, its vocabulary from ``wsj.train.text.txt``/``.tags.txt``.
The treebank is not free: this writes a SYNTHETIC one (a toy grammar, fixed seed) into
``<out>/tmp`` with those two files (T2T's ``words_and_tags_from_wsj_tree`` of the train trees),
runs the datagen as ``bin/t2t_datagen.py`` does (seeds 429459, ``problem.generate_data``; only
``wsj_parsing`` imported), keeps the vocab in ``<out>/data`` and writes a JSON of every file's
sha256 and size (the 101 shards are not kept), examples, decoded first examples, hparams and
metrics. Like ``make_t2t_usr_dir_reference.py`` (whose helpers it imports) it reruns itself
(``--attempts``) until all records list their features in sorted order. In T2T's venv::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_wsj_parsing_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_wsj_parsing_reference
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib import metadata

import make_t2t_usr_dir_reference as usr_ref  # its directory is on sys.path (run as a file)

PROBLEM = "wsj_parsing"
TREES = {"wsjTrain.trees": 230, "wsjEval.trees": 12}  # >100: shards of 2-3, shuffled
VOCAB_LINES = 1000  # T2T's WsjParsing.max_samples_for_vocab
LEX = {
    "DT": "the a every this".split(),
    "NN": "cat dog park table garden book child".split(),
    "NNS": "cats dogs books apples".split(),
    "JJ": "small red old happy".split(),
    "VBZ": "sees likes finds owns".split(),
    "VBD": "saw found liked".split(),
    "IN": "in on near with".split(),
    "NNP": "Mary London Alice".split(),
    "CD": "3 12 1990".split(),
    "RB": "very quite".split(),
}
Tree = list  # [label, child, ...]; a leaf is [tag, word]


def leaf(rng: random.Random, tag: str) -> Tree:
    return [tag, rng.choice(LEX[tag])]


def simple_np(rng: random.Random) -> Tree:
    kind = rng.random()
    if kind < 0.15:
        return ["NP", leaf(rng, "NNP")]
    if kind < 0.3:
        return ["NP", leaf(rng, "CD"), leaf(rng, "NNS")]
    adjective = [leaf(rng, "JJ")] if rng.random() < 0.35 else []
    return ["NP", leaf(rng, "DT"), *adjective, leaf(rng, "NN")]


def pp(rng: random.Random) -> Tree:
    return ["PP", leaf(rng, "IN"), simple_np(rng)]


def np_(rng: random.Random) -> Tree:
    """A noun phrase; now and then a nested one, an NP with a PP."""
    return ["NP", simple_np(rng), pp(rng)] if rng.random() < 0.25 else simple_np(rng)


def vp(rng: random.Random) -> Tree:
    kind = rng.random()
    if kind < 0.2:
        return ["VP", ["VBZ", "is"], ["ADJP", leaf(rng, "RB"), leaf(rng, "JJ")]]
    verb = leaf(rng, "VBZ" if kind < 0.7 else "VBD")
    extra = [pp(rng)] if rng.random() < 0.3 else []
    return ["VP", verb, np_(rng), *extra]


def sentence(rng: random.Random) -> Tree:
    front = [pp(rng), [",", ","]] if rng.random() < 0.2 else []
    tree = ["S", *front, np_(rng), vp(rng), [".", "."]]
    first = tree
    while isinstance(first[1], list):  # capitalize the sentence's first word
        first = first[1]
    first[1] = first[1][:1].upper() + first[1][1:]
    return ["TOP", tree]


def render(tree: Tree) -> str:
    if isinstance(tree[1], str):
        return f"({tree[0]} {tree[1]})"
    return f"({tree[0]} " + " ".join(render(child) for child in tree[1:]) + ")"


def write_corpus(tmp_dir: str, words_and_tags: Callable[[str], tuple[str, str]]) -> None:
    """The two tree files, and the words and tags of the train trees (T2T's vocab source)."""
    rng = random.Random(1412)  # arXiv 1412.7449, the linearization T2T uses
    os.makedirs(tmp_dir, exist_ok=True)
    trees = {name: [render(sentence(rng)) for _ in range(n)] for name, n in TREES.items()}
    for name, lines in trees.items():
        usr_ref._lines(os.path.join(tmp_dir, name), lines)
    pairs = [words_and_tags(line) for line in trees["wsjTrain.trees"]]
    # More sentences than T2T's max_samples_for_vocab (1,000), the lines past it of words
    # seen nowhere before, so that the vocabulary shows whether the reader stops there.
    pairs += [words_and_tags(render(sentence(rng))) for _ in range(VOCAB_LINES - len(pairs))]
    pairs += [("zephyr quixotic jabberwock .", "S NP NN /NP . /S")] * 30
    usr_ref._lines(os.path.join(tmp_dir, "wsj.train.text.txt"), [p[0] for p in pairs])
    usr_ref._lines(os.path.join(tmp_dir, "wsj.train.tags.txt"), [p[1] for p in pairs])


def file_facts(path: str) -> dict:
    with open(path, "rb") as f:
        data = f.read()
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def first_examples(tf, encoder, paths: list[str], n: int = 3) -> list[dict]:
    """The first ``n`` records of the split's shards in file order, ids and decoded text."""
    found = []
    for path in paths:
        for record in tf.compat.v1.io.tf_record_iterator(path):
            feature = tf.train.Example.FromString(record).features.feature
            example = {}
            for key in ("inputs", "targets"):
                ids = list(feature[key].int64_list.value)
                example[key + "_ids"] = ids
                example[key] = encoder.decode(ids[:-1] if ids[-1:] == [1] else ids)
            found.append(example)
            if len(found) == n:
                return found
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, data/, JSON)")
    parser.add_argument("--attempts", type=int, default=10, help="runs to try for sorted records")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import wsj_parsing  # registers wsj_parsing
    from tensor2tensor.utils import registry

    tmp_dir = os.path.join(args.out, "tmp")
    write_corpus(tmp_dir, wsj_parsing.words_and_tags_from_wsj_tree)
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    tf.compat.v1.set_random_seed(usr_ref.SEED)  # bin/t2t_datagen.py, main
    random.seed(usr_ref.SEED)
    np.random.seed(usr_ref.SEED)
    problem = registry.problem(PROBLEM)
    problem.generate_data(data_dir, scratch, None)

    names = sorted(os.listdir(data_dir))
    shards = {f: usr_ref.sorted_records(tf, os.path.join(data_dir, f)) for f in names if "-" in f}
    encoder = problem.get_feature_encoders(data_dir)["targets"]
    hparams = problem.get_hparams()
    splits = {}
    for split in ("train", "dev"):
        files = [f for f in shards if f.startswith(f"{PROBLEM}-{split}-")]
        paths = [os.path.join(data_dir, f) for f in files]
        splits[split] = {
            "shards": len(files),
            "non_empty_shards": sum(shards[f][1] > 0 for f in files),
            "examples": sum(shards[f][1] for f in files),
            "first_examples": first_examples(tf, encoder, paths),
        }
    summary = {
        "problem": PROBLEM,
        "random_seed": usr_ref.SEED,
        "files": {f: file_facts(os.path.join(data_dir, f)) for f in names},
        "examples_per_file": {f: n for f, (_, n) in shards.items()},
        "splits": splits,
        "vocab_file": problem.vocab_filename,
        "vocab_size": encoder.vocab_size,
        "problem_hparams": {
            "input_space_id": int(hparams.input_space_id),
            "target_space_id": int(hparams.target_space_id),
            "vocab_size": dict(hparams.vocab_size),
            "loss_multiplier": hparams.loss_multiplier,
            "modality": dict(hparams.modality),
        },
        "eval_metrics": list(problem.eval_metrics()),
        "all_records_in_sorted_feature_order": all(a == n for a, n in shards.values()),
        "tmp_files": sorted(os.listdir(tmp_dir)),
        "versions": {
            "tensor2tensor": metadata.version("tensor2tensor"),
            "tensorflow": tf.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
    }
    data_out = os.path.join(args.out, "data")
    shutil.rmtree(data_out, ignore_errors=True)
    os.makedirs(data_out)
    shutil.copy(os.path.join(data_dir, problem.vocab_filename), data_out)
    with open(os.path.join(args.out, "t2t_1.15.7_datagen.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(work)
    print("wrote", args.out, {s: v["examples"] for s, v in splits.items()})
    if not summary["all_records_in_sorted_feature_order"] and args.attempts > 1:
        print("records not in sorted feature order; running again in a new process")
        argv = [a for a in sys.argv[1:] if not a.startswith("--attempts")]
        command = [sys.executable, sys.argv[0], *argv, f"--attempts={args.attempts - 1}"]
        sys.exit(subprocess.call(command))
    if not summary["all_records_in_sorted_feature_order"]:
        sys.exit("records not in sorted feature order after the last attempt")


if __name__ == "__main__":
    main()
