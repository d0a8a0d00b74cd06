"""T2T 1.15.7's datagen of its own language-model problems on tiny stand-in corpora.

Writes ``tests/data/t2t_lm_problems_reference/``: ``tmp/simple-examples.tgz`` (Mikolov's PTB
archive layout: ``simple-examples/data/ptb.{train,valid,test}.txt`` and a char file) and
``tmp/wikitext-103-v1.zip`` (``wikitext-103/wiki.{train,valid,test}.tokens``), generated words
from a fixed seed; then runs T2T's ``languagemodel_ptb10k`` and ``languagemodel_wikitext103``
datagen as ``bin/t2t_datagen.py`` does (seeds 429459, ``problem.generate_data``) and keeps their
vocabulary and shards under ``data/<problem>/``; and ``languagemodel_wikitext103_l4k``'s with
examples of up to 30 words (a subclass), under ``data/languagemodel_wikitext103_l4k_30/``.
Run in T2T's virtualenv::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_lm_problems_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_lm_problems_reference
"""

import argparse
import io
import os
import random
import shutil
import sys
import tarfile
import tempfile
import zipfile

SEED = 429459  # bin/t2t_datagen.py
WORDS = "the cat sat on a mat dog ran far <unk> N and of to".split()
PROBLEMS = ("languagemodel_ptb10k", "languagemodel_wikitext103")
SHORT_LENGTH = 30


def text(rng, lines, lead=" "):
    """Lines of 3-12 words; PTB's lines start and end with a space, as Mikolov's files."""
    return "".join(
        lead + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + " \n"
        for _ in range(lines)
    ).encode()


def write_corpora(tmp_dir):
    rng = random.Random(0)
    files = {
        "simple-examples/data/ptb.train.txt": text(rng, 60),
        "simple-examples/data/ptb.valid.txt": text(rng, 8),
        "simple-examples/data/ptb.test.txt": text(rng, 8),
        "simple-examples/data/ptb.char.train.txt": text(rng, 4),
    }
    with tarfile.open(os.path.join(tmp_dir, "simple-examples.tgz"), "w:gz") as tgz:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            tgz.addfile(info, io.BytesIO(data))
    with zipfile.ZipFile(os.path.join(tmp_dir, "wikitext-103-v1.zip"), "w") as archive:
        for split, lines in (("train", 40), ("valid", 6), ("test", 6)):
            body = b"\n = Title = \n\n" + text(rng, lines)
            archive.writestr(zipfile.ZipInfo(f"wikitext-103/wiki.{split}.tokens"), body)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import ptb, wikitext103  # noqa: F401  (registers)
    from tensor2tensor.utils import registry

    tmp_dir = os.path.join(args.out, "tmp")
    os.makedirs(tmp_dir, exist_ok=True)
    write_corpora(tmp_dir)
    # languagemodel_wikitext103_l4k as T2T writes it with examples of up to 30 words (its
    # 4,096 would join these corpora's lines into none): a subclass, under the problem's name
    short = type(
        "Short", (wikitext103.LanguagemodelWikitext103L4k,), {"sequence_length": SHORT_LENGTH}
    )
    short.name = "languagemodel_wikitext103_l4k"
    problems = {name: registry.problem(name) for name in PROBLEMS}
    problems[f"languagemodel_wikitext103_l4k_{SHORT_LENGTH}"] = short()
    for name, problem in problems.items():
        data_dir = os.path.join(args.out, "data", name)
        shutil.rmtree(data_dir, ignore_errors=True)
        os.makedirs(data_dir)
        with tempfile.TemporaryDirectory() as scratch:  # T2T extracts the archives here
            for archive in os.listdir(tmp_dir):
                shutil.copy(os.path.join(tmp_dir, archive), scratch)
            tf.compat.v1.set_random_seed(SEED)
            random.seed(SEED)
            np.random.seed(SEED)
            problem.generate_data(data_dir, scratch, None)
        print(name, sorted(os.listdir(data_dir)))


if __name__ == "__main__":
    main()
