"""What tensor2tensor 1.15.7 gives for its parsing problems of ``problem_hparams.py``
(``parsing_english_ptb8k``, ``parsing_english_ptb16k``) and ``ice_parsing.py``
(``parsing_icelandic16k``): reference test data for ``t2t_repro/t2t_compat/ptb_parsing.py``
and ``ice_parsing.py``.

No treebank is ours to ship: this writes SYNTHETIC data (toy words, fixed seed). For the PTB
problems, which have no datagen in T2T, small subword vocabularies under T2T's names
(``vocab.endefr.8192``, ``wsj_source.vocab.512``, ``wsj_target.vocab.16384``, built by T2T's
``SubwordTextEncoder``) go to ``<out>/ptb_data/``; T2T's problem hparams on that data dir and
T2T's encodings of a few sentences are recorded. For the Icelandic problem, tabbed
``parsing_train.pairs``/``parsing_dev.pairs`` go to ``<out>/ice_tmp/`` and T2T's datagen runs as
``bin/t2t_datagen.py`` runs it (seeds 429459, ``problem.generate_data(data_dir, tmp_dir,
None)``): the files written, each vocabulary's sha256, each shard's record count and the
sha256 of its records' ids, the problem hparams. Writes ``<out>/t2t_1.15.7_parsing.json``. In
T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_parsing_problems_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_parsing_problems_reference
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
EN_WORDS = "the a cat dog house river sees likes small old red near don't it's".split()
ICE_WORDS = "Jón sá hundinn í gær við húsið þar sem áin rennur fallega ég þú það".split()
EN_TAGS = "S NP VP PP DT NN VBZ JJ IN".split()
ICE_TAGS = "IP-MAT NP-SBJ NP-OBJ PP ADVP VBDI N-N N-A D-A P ADV".split()
SENTENCES = [  # what the recorded encodings encode (a word no vocabulary has among them)
    "the cat sees a small dog",
    "(S (NP DT NN ) (VP VBZ (NP JJ NN ) ) )",
    "Jón sá hundinn þar",
    "zebra Ölfusá unknown-ish ...",
]


def tree(rng: random.Random, words: list, tags: list) -> tuple[str, str]:
    """A sentence and a flat bracketing of it (toy; only its tokens matter)."""
    chosen = [rng.choice(words) for _ in range(rng.randint(2, 7))]
    parts = [f"({rng.choice(tags)} {w} )" for w in chosen]
    return " ".join(chosen), f"({tags[0]} " + " ".join(parts) + " )"


def write_ice_pairs(tmp_dir: str) -> None:
    rng = random.Random(2020)
    os.makedirs(tmp_dir, exist_ok=True)
    for name, count in (("parsing_train.pairs", 150), ("parsing_dev.pairs", 14)):
        rows = ["\t".join(tree(rng, ICE_WORDS, ICE_TAGS)) for _ in range(count)]
        rows[3] = "a line without a tab is skipped"
        rows[5] = ""
        rows[7] = "  " + rows[7] + "\textra\tcolumns  "  # T2T splits once: extra in target
        with open(os.path.join(tmp_dir, name), "w", encoding="utf-8") as f:
            f.write("\n".join(rows) + "\n")


def write_ptb_vocabs(text_encoder, data_dir: str) -> None:
    rng = random.Random(7)
    os.makedirs(data_dir, exist_ok=True)
    pairs = [tree(rng, EN_WORDS, EN_TAGS) for _ in range(200)]
    for name, size, texts in (
        ("vocab.endefr.8192", 2**13, [t for p in pairs for t in p]),
        ("wsj_source.vocab.512", 2**9, [p[0] for p in pairs]),
        ("wsj_target.vocab.16384", 2**14, [p[1] for p in pairs]),
    ):
        encoder = text_encoder.SubwordTextEncoder.build_from_generator(texts, size)
        encoder.store_to_file(os.path.join(data_dir, name))


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def shard_ids(tf, path: str) -> list:
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def ids_digest(records: list) -> str:
    return hashlib.sha256(json.dumps(records, separators=(",", ":")).encode()).hexdigest()


def problem_facts(problem, data_dir: str, hparam) -> dict:
    hp = problem.get_hparams(hparam.HParams(data_dir=data_dir))
    encoders = problem.feature_encoders(data_dir)
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "batch_size_multiplier": hp.batch_size_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "encoder_vocab_sizes": {k: e.vocab_size for k, e in sorted(encoders.items())},
        "encodings": {k: [e.encode(s) for s in SENTENCES] for k, e in sorted(encoders.items())},
    }


def datagen_error(problem, data_dir: str) -> str:
    try:
        problem.generate_data(data_dir, tempfile.gettempdir(), None)
    except Exception as e:  # noqa: BLE001  (what T2T raises is the fact recorded)
        return type(e).__name__
    return "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (data, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import (  # noqa: F401  (registers the problems)
        ice_parsing,
        problem_hparams,
        text_encoder,
    )
    from tensor2tensor.utils import hparam, registry

    ptb_data, ice_tmp = os.path.join(args.out, "ptb_data"), os.path.join(args.out, "ice_tmp")
    for folder in (ptb_data, ice_tmp):
        shutil.rmtree(folder, ignore_errors=True)
    write_ptb_vocabs(text_encoder, ptb_data)
    write_ice_pairs(ice_tmp)
    summary = {"random_seed": SEED, "sentences": SENTENCES, "problems": {}}
    for name in ("parsing_english_ptb8k", "parsing_english_ptb16k"):
        problem = registry.problem(name)
        facts = problem_facts(problem, ptb_data, hparam)
        facts["datagen_raises"] = datagen_error(registry.problem(name), ptb_data)
        summary["problems"][name] = facts

    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    os.makedirs(data_dir)
    shutil.copytree(ice_tmp, scratch)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, per problem
    random.seed(SEED)
    np.random.seed(SEED)
    problem = registry.problem("parsing_icelandic16k")
    problem.generate_data(data_dir, scratch, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f}
    facts = problem_facts(registry.problem("parsing_icelandic16k"), data_dir, hparam)
    facts.update(
        files=files,
        vocab_sha256={f: sha256_file(os.path.join(data_dir, f)) for f in files if "vocab" in f},
        records={f: len(r) for f, r in shards.items()},
        records_sha256={f: ids_digest(r) for f, r in shards.items()},
    )
    summary["problems"]["parsing_icelandic16k"] = facts
    shutil.rmtree(work)
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_parsing.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
