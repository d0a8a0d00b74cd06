"""What tensor2tensor 1.15.7's datagen writes for its Wikipedia language models
(``data_generators/wiki_lm.py``): reference test data for ``t2t_repro/t2t_compat/wiki_lm.py``.

T2T's corpora are large Drive downloads: this writes SYNTHETIC ones (toy words of four
languages, a fixed seed) under T2T's names, ``<lang>wiki_{train,eval,test}.txt.gz`` (gzip
mtime 0), into ``<out>/tmp``: lines of varied length, blank ones, and lines longer than
T2T's 4,096-character threshold (``concat_generator`` drops them). Then it runs the datagen
of ``languagemodel_en_wiki32k`` and ``languagemodel_de_en_fr_ro_wiki64k`` as
``bin/t2t_datagen.py`` does (seeds 429459, ``problem.generate_data(data_dir, tmp_dir, None)``)
in a scratch copy, and that of ``translate_enro_wmt_multi64k`` (its vocabulary: the four
languages' model's) with the synthetic EN-RO corpus of ``tests/data/t2t_translate_reference``
added, and writes ``<out>/t2t_1.15.7_wiki_lm.json``: the files written, the
vocabulary's sha256, each shard's record count and sha256 of its records' ids, the files left
in tmp, the problem hparams; and ``translate_enro_wmt_multi_small64k``'s and ``_tiny64k``'s
samples (T2T's ``random`` sampling, seeded 429459; T2T's ``raise StopIteration`` ends a split
in a RuntimeError on Python 3.7+, recorded), also for a subclass sampling half the pairs.

Under ``tasks``, the same summary for problems taking a wiki model's vocabulary
(``use_vocab_from_other_problem``, or ``stanford_nli.py``'s ``vocab_filename``), each run on
the wiki files plus its task's inputs as the other reference scripts made them (``TASKS``:
CNN/DM's of tests/data/t2t_text_corpora_reference, MNLI's and SNLI's zips of
tests/data/t2t_classification_reference), copied into the scratch tmp dir. In
T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_wiki_lm_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_wiki_lm_reference
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
PROBLEMS = (
    "languagemodel_en_wiki32k",
    "languagemodel_de_en_fr_ro_wiki64k",
    "translate_enro_wmt_multi64k",
)
ENRO_TMP = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "../../tests/data/t2t_translate_reference/translate_enro_wmt8k/tmp",
)
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/data")
_CNNDM = os.path.join(_DATA, "t2t_text_corpora_reference/cnn_dailymail/tmp")
_GLUE = os.path.join(_DATA, "t2t_classification_reference/tmp")
_CNNDM_FILES = [
    os.path.join(_CNNDM, name)
    for name in ("all_train.txt", "all_val.txt", "all_test.txt")
    + ("cnn_stories.tgz", "dailymail_stories.tgz")
]
TASKS = {  # problem: the input files added to the wiki files
    "summarize_cnn_dailymail_wiki_lm_shared_vocab": _CNNDM_FILES,
    "summarize_frac50_cnn_dailymail_wiki_lm_shared_vocab64k": _CNNDM_FILES,
    "multi_nli_wiki_lm_shared_vocab": [os.path.join(_GLUE, "MNLI.zip")],
    "stanford_nli_wiki_lm_shared_vocab": [os.path.join(_GLUE, "SNLI.zip")],
}
HALF = 307000  # how_many_examples_to_sample of a subclass: T2T's sample_prob 0.5
WORDS = {
    "en": "the a river city was is of in and king born near old new small war".split(),
    "de": "der die das und ist Straße über für Stadt König groß Fluß wurde".split(),
    "fr": "le la les et est été où château ville rivière français né près".split(),
    "ro": "și este în oraș râu țară până mare născut lângă rege ăsta".split(),
}
LINES = {"train": 260, "eval": 70, "test": 50}  # ~100 chars a line: a few examples each


def line(rng: random.Random, words: list) -> str:
    kind = rng.random()
    if kind < 0.05:
        return ""
    if kind < 0.08:  # longer than T2T's threshold: joined into no example
        return " ".join(rng.choice(words) for _ in range(900))
    return " ".join(rng.choice(words) for _ in range(rng.randint(2, 40)))


def write_corpora(tmp_dir: str) -> None:
    rng = random.Random(1608)
    os.makedirs(tmp_dir, exist_ok=True)
    for lang, words in WORDS.items():
        for split, n in LINES.items():
            text = "".join(f"  {line(rng, words)} \n" for _ in range(n))
            with open(os.path.join(tmp_dir, f"{lang}wiki_{split}.txt.gz"), "wb") as f:
                f.write(gzip.compress(text.encode("utf-8"), mtime=0))


def shard_ids(tf, path: str) -> list:
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
    return found


def ids_digest(records: list) -> str:
    return hashlib.sha256(json.dumps(records, separators=(",", ":")).encode()).hexdigest()


def problem_facts(problem, data_dir: str, hparam) -> dict:
    hp = problem.get_hparams(hparam.HParams(data_dir=data_dir))
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_filename": problem.vocab_filename,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
    }


def run(name, tmp_dir, seed_all, registry, tf, hparam, inputs=()) -> dict:
    """One problem's datagen in a scratch copy of tmp (and ``inputs``); its summary."""
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    os.makedirs(data_dir)
    shutil.copytree(tmp_dir, scratch)
    for path in inputs:
        shutil.copy(path, scratch)
    seed_all()
    problem = registry.problem(name)
    problem.generate_data(data_dir, scratch, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f}
    with open(os.path.join(data_dir, problem.vocab_filename), "rb") as f:
        vocab = f.read()
    summary = {
        "files": files,
        "vocab_sha256": hashlib.sha256(vocab).hexdigest(),
        "records": {f: len(r) for f, r in shards.items()},
        "records_sha256": {f: ids_digest(r) for f, r in shards.items()},
        "tmp_files_after": sorted(os.listdir(scratch)),
        "hparams": problem_facts(problem, data_dir, hparam),
    }
    shutil.rmtree(work)
    print(name, sum(len(r) for r in shards.values()), "records", flush=True)
    return summary


def sampled(problem, tmp_dir: str, split: str) -> dict:
    """A split's samples drawn after ``random.seed(SEED)``: count, digest, and T2T's error."""
    random.seed(SEED)
    found, error = [], None
    try:
        for sample in problem.generate_samples(None, tmp_dir, split):
            found.append([sample["inputs"], sample["targets"]])
    except RuntimeError as e:  # PEP 479: T2T's raise StopIteration in a generator
        error = str(e)
    return {"count": len(found), "sha256": ids_digest(found), "error": error}


def sampling(registry, tmp_dir: str) -> dict:
    """The small and tiny EN-RO problems' samples, and a half-sampling subclass's."""

    class Half(registry.problem("translate_enro_wmt_multi_small64k").__class__):
        @property
        def how_many_examples_to_sample(self):
            return HALF

    problems = {
        "translate_enro_wmt_multi_small64k": registry.problem("translate_enro_wmt_multi_small64k"),
        "translate_enro_wmt_multi_tiny64k": registry.problem("translate_enro_wmt_multi_tiny64k"),
        "half": Half(),
    }
    return {
        name: {split: sampled(problem, tmp_dir, split) for split in ("train", "dev")}
        for name, problem in problems.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import (  # noqa: F401  (registers the problems)
        cnn_dailymail,
        multinli,
        stanford_nli,
        translate_enro,
        wiki_lm,
    )
    from tensor2tensor.utils import hparam, registry

    def seed_all():
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, per problem
        random.seed(SEED)
        np.random.seed(SEED)

    tmp_dir = os.path.join(args.out, "tmp")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    write_corpora(tmp_dir)
    shutil.copytree(ENRO_TMP, tmp_dir, dirs_exist_ok=True)
    summary = {"random_seed": SEED, "problems": {}}
    for name in PROBLEMS:
        summary["problems"][name] = run(name, tmp_dir, seed_all, registry, tf, hparam)
    wiki_tmp = tempfile.mkdtemp()  # the wiki files only
    for name in os.listdir(tmp_dir):
        if "wiki_" in name:
            shutil.copy(os.path.join(tmp_dir, name), wiki_tmp)
    summary["tasks"] = {}
    for name, inputs in TASKS.items():
        summary["tasks"][name] = run(name, wiki_tmp, seed_all, registry, tf, hparam, inputs)
    shutil.rmtree(wiki_tmp)
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(tmp_dir, scratch, dirs_exist_ok=True)
        summary["enro_sampling"] = sampling(registry, scratch)
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_wiki_lm.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
