"""What tensor2tensor 1.15.7 makes of packed examples (reference test data for
``t2t_repro/data/example_packing.py`` and ``t2t_repro/t2t_compat/packed_problems.py``;
compared by ``tests/test_t2t_packed_problems.py``). Writes into ``--out``
(``tests/data/t2t_packed_reference``) ``t2t_1.15.7_packed.json``:

- ``pack_examples``: T2T's ``generator_utils.pack_examples`` on crafted examples (seeded): with
  and without inputs, spacing 0 and 2, ``chop_long_sequences`` (a sequence of several times
  ``packed_length``, one of exactly twice it), a pair longer than ``packed_length``, and more
  open packs than ``queue_size`` (its default and 3). Each case: its arguments, the examples,
  and T2T's packed examples in order.
- ``facts``: for each of T2T's packed problems whose base this project provides, what T2T's
  class says (``packed_length``, ``packed_spacing``, ``has_inputs``, prefixes,
  ``vocab_filename``, ``dataset_splits``, ``num_training_examples``, ``max_length``, the
  reading spec's fields).
- ``datagen``: T2T's datagen (seeds 429459, ``generate_data(data_dir, tmp_dir, None)``, as
  ``bin/t2t_datagen.py``) of ``translate_ende_wmt8k_packed`` and
  ``translate_ende_wmt_multi64k_packed1k`` on synthetic WMT EN-DE archives under T2T's names
  (``translate_ende/tmp``; the multilingual vocabulary is T2T's 8k one of these texts, given
  under the wiki vocabulary's name in ``translate_ende/wiki64k_vocab``), of
  ``languagemodel_lm1b_characters_packed`` and ``languagemodel_lm1b8k_packed`` on a synthetic
  LM1B tarball and vocabulary (``lm1b/tmp``; T2T extracts the tarball only right after
  downloading it, so it is extracted here for T2T), and of the usr_dir
  ``t2t_usr_dir_packed``'s two problems: file names, vocabulary sha256, each shard's records
  (all features' ids: a digest, or for the usr_dir the records themselves) and the problem
  hparams' modalities.

Records are compared as ids: T2T lists a record's features in a per-process hash order. In
T2T's own virtualenv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_packed_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_packed_reference
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile

from make_t2t_translate_reference import SEED, pairs, text, write_tar

LM1B_DIR = "1-billion-word-language-modeling-benchmark-r13output"
FACT_PROBLEMS = (
    "translate_ende_wmt32k_packed translate_ende_wmt8k_packed translate_enes_wmt32k_packed "
    "translate_enes_wmt8k_packed translate_enfr_wmt32k_packed languagemodel_lm1b32k_packed "
    "languagemodel_lm1b8k_packed "
    "languagemodel_lm1b_characters_packed translate_ende_wmt_multi64k_packed1k "
    "translate_enfr_wmt_multi64k_packed1k translate_enro_wmt_multi_tiny64k_packed1k "
    "multi_nli_text2text_multi64k_packed1k squad_text2text_multi64k_packed1k "
    "summarize_cnn_dailymail_multi64k_packed1k languagemodel_de_en_fr_ro_wiki64k_fitb_packed1k"
).split()
WIKI64K_VOCAB = "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"


def packing_cases() -> list[dict]:
    """The crafted ``pack_examples`` calls: (arguments, examples)."""
    rng = random.Random(1517)
    seq = lambda lo, hi: [rng.randint(2, 99) for _ in range(rng.randint(lo, hi))]  # noqa: E731
    lm = [{"targets": seq(1, 9)} for _ in range(40)]
    chop = [{"targets": seq(1, 6)} for _ in range(6)]
    chop[2]["targets"] = seq(27, 27)  # 2 pieces of 10, 7 left
    chop[4]["targets"] = seq(20, 20)  # exactly 2 pieces: an empty remainder
    pairs_ = [{"inputs": seq(1, 8), "targets": seq(1, 8)} for _ in range(30)]
    pairs_[5] = {"inputs": seq(14, 14), "targets": seq(3, 3)}  # longer than packed_length
    pairs_[9] = {"inputs": seq(2, 2), "targets": seq(13, 13)}
    full = [{"targets": seq(6, 9)} for _ in range(30)]  # one a pack: the queue overflows
    return [
        {"args": {"has_inputs": False, "packed_length": 12, "spacing": 0}, "examples": lm},
        {"args": {"has_inputs": False, "packed_length": 12, "spacing": 2}, "examples": lm},
        {
            "args": {
                "has_inputs": False,
                "packed_length": 10,
                "spacing": 2,
                "chop_long_sequences": True,
            },
            "examples": chop,
        },
        {"args": {"has_inputs": False, "packed_length": 10, "spacing": 0}, "examples": chop},
        {"args": {"has_inputs": True, "packed_length": 12, "spacing": 0}, "examples": pairs_},
        {"args": {"has_inputs": True, "packed_length": 12, "spacing": 2}, "examples": pairs_},
        {"args": {"has_inputs": False, "packed_length": 10, "spacing": 2}, "examples": full},
        {
            "args": {"has_inputs": False, "packed_length": 14, "spacing": 0, "queue_size": 3},
            "examples": full,
        },
        {"args": {"has_inputs": True}, "examples": pairs_},  # T2T's defaults: 256, 2, 10
    ]


def write_ende(tmp: str) -> None:
    """WMT EN-DE's three train archives and dev.tgz, synthetic, under T2T's names."""
    rng = random.Random(2018)
    for archive, prefix, n in (
        ("training-parallel-nc-v13.tgz", "training-parallel-nc-v13/news-commentary-v13", 150),
        ("training-parallel-commoncrawl.tgz", "commoncrawl", 120),
        ("training-parallel-europarl-v7.tgz", "training/europarl-v7", 130),
    ):
        got = pairs(rng, "de", n)
        members = {
            f"{prefix}.de-en.en": text([p[0] for p in got]),
            f"{prefix}.de-en.de": text([p[1] for p in got]),
        }
        write_tar(os.path.join(tmp, archive), members)
    got = pairs(rng, "de", 40)
    dev = {"dev/newstest2013.en": text([p[0] for p in got])}
    dev["dev/newstest2013.de"] = text([p[1] for p in got])
    write_tar(os.path.join(tmp, "dev.tgz"), dev)


def write_lm1b(tmp: str) -> None:
    """LM1B's tarball (99 train files, the heldout file) and its word list; some lines longer
    than 1,024 characters (the characters problem chops them), and words outside the list."""
    rng = random.Random(2019)
    words = "the a of market shares rose fell percent company said year new".split()
    line = lambda n: " ".join(rng.choice(words + ["zyx"]) for _ in range(n))  # noqa: E731
    members = {}
    for i in range(1, 100):
        lines = [line(rng.randint(3, 30)) for _ in range(rng.randint(2, 6))]
        if i % 20 == 0:
            lines.append(line(260))  # > 1,024 characters
        name = f"{LM1B_DIR}/training-monolingual.tokenized.shuffled/news.en-{i:05d}-of-00100"
        members[name] = text(lines)
    heldout = [line(rng.randint(3, 30)) for _ in range(12)] + [line(300)]
    name = f"{LM1B_DIR}/heldout-monolingual.tokenized.shuffled/news.en.heldout-00000-of-00050"
    members[name] = text(heldout)
    write_tar(os.path.join(tmp, f"{LM1B_DIR}.tar.gz"), members)
    with open(os.path.join(tmp, "vocab-2016-09-10.txt.en"), "wb") as f:
        f.write(text(["<S>", "</S>", "<UNK>", *words]))


def shard_records(tf, path: str) -> list[dict]:
    """Each record's {feature: ids}, features sorted, in file order."""
    out = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        out.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
    return out


def digest(records: list) -> str:
    return hashlib.sha256(json.dumps(records, separators=(",", ":")).encode()).hexdigest()


def facts(problem, hparam) -> dict:
    try:
        examples = problem.num_training_examples
    except NotImplementedError:  # T2T's Problem default
        examples = "NotImplementedError"
    return {
        "packed_length": problem.packed_length,
        "packed_spacing": problem.packed_spacing,
        "has_inputs": problem.has_inputs,
        "inputs_prefix": problem.inputs_prefix,
        "targets_prefix": problem.targets_prefix,
        "vocab_type": problem.vocab_type,
        "vocab_filename": problem.vocab_filename if problem.vocab_type != "character" else None,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
        "num_training_examples": examples,
        "max_length": problem.max_length(hparam.HParams(max_length=77, batch_size=99)),
        "reading_spec": sorted(problem.example_reading_spec()[0]),
    }


def run_datagen(tf, np, registry, hparam, name, tmp_dir, vocab=None) -> dict:
    """T2T's datagen of ``name`` from a copy of ``tmp_dir`` (``vocab``: a file put in the data
    dir first); its files, vocabulary, records and hparams' modalities."""
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    if vocab:
        shutil.copy(vocab, data_dir)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
    random.seed(SEED)
    np.random.seed(SEED)
    problem = registry.problem(name)
    problem.generate_data(data_dir, scratch, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_records(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f}
    vocab_sha = None
    if problem.vocab_type != "character":
        with open(os.path.join(data_dir, problem.vocab_filename), "rb") as f:
            vocab_sha = hashlib.sha256(f.read()).hexdigest()
    hp = problem.get_hparams(hparam.HParams(data_dir=data_dir))
    found = {
        "files": files,
        "vocab_sha256": vocab_sha,
        "records": {f: len(r) for f, r in shards.items()},
        "records_sha256": {f: digest(r) for f, r in shards.items()},
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
    }
    if name.startswith("packed_"):  # the usr_dir's: few records, kept whole
        found["shards"] = shards
    if name == "translate_ende_wmt8k_packed":
        found["vocab_path"] = os.path.join(data_dir, problem.vocab_filename)
        found["work"] = work
    else:
        shutil.rmtree(work)
    print(name, sum(len(r) for r in shards.values()), "records")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="tests/data/t2t_packed_reference")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import (  # noqa: F401  (registers the problems)
        cnn_dailymail,
        generator_utils,
        lm1b,
        multinli,
        squad,
        translate_ende,
        translate_enes,
        translate_enfr,
        translate_enro,
        wiki_lm,
    )
    from tensor2tensor.utils import hparam, registry, usr_dir

    out = os.path.abspath(args.out)
    summary = {"random_seed": SEED, "pack_examples": [], "facts": {}, "datagen": {}}
    for case in packing_cases():
        packed = generator_utils.pack_examples(iter(case["examples"]), **case["args"])
        summary["pack_examples"].append(dict(case, packed=list(packed)))
    for name in FACT_PROBLEMS:
        summary["facts"][name] = facts(registry.problem(name), hparam)

    ende, lm1b_tmp = os.path.join(out, "translate_ende", "tmp"), os.path.join(out, "lm1b", "tmp")
    for folder in (ende, lm1b_tmp):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    write_ende(ende)
    write_lm1b(lm1b_tmp)
    lm1b_t2t = tempfile.mkdtemp()  # T2T's tmp dir right after its download and extraction
    shutil.copytree(lm1b_tmp, lm1b_t2t, dirs_exist_ok=True)
    with tarfile.open(os.path.join(lm1b_t2t, f"{LM1B_DIR}.tar.gz")) as tar:
        tar.extractall(lm1b_t2t)

    datagen = summary["datagen"]
    datagen["translate_ende_wmt8k_packed"] = run_datagen(
        tf, np, registry, hparam, "translate_ende_wmt8k_packed", ende
    )
    wiki = os.path.join(out, "translate_ende", "wiki64k_vocab")
    shutil.rmtree(wiki, ignore_errors=True)
    os.makedirs(wiki)
    shutil.copy(datagen["translate_ende_wmt8k_packed"].pop("vocab_path"), f"{wiki}/{WIKI64K_VOCAB}")
    shutil.rmtree(datagen["translate_ende_wmt8k_packed"].pop("work"))
    multi = "translate_ende_wmt_multi64k_packed1k"
    vocab = f"{wiki}/{WIKI64K_VOCAB}"
    datagen[multi] = run_datagen(tf, np, registry, hparam, multi, ende, vocab)
    for name in ("languagemodel_lm1b_characters_packed", "languagemodel_lm1b8k_packed"):
        datagen[name] = run_datagen(tf, np, registry, hparam, name, lm1b_t2t)
    shutil.rmtree(lm1b_t2t)
    usr_dir.import_usr_dir(os.path.join(out, "t2t_usr_dir_packed"))
    empty = tempfile.mkdtemp()
    for name in ("packed_pairs", "packed_lines"):
        datagen[name] = run_datagen(tf, np, registry, hparam, name, empty)
    shutil.rmtree(empty)
    summary["versions"] = {
        "tensor2tensor": "1.15.7",
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(out, "t2t_1.15.7_packed.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", os.path.join(out, "t2t_1.15.7_packed.json"))


if __name__ == "__main__":
    main()
