"""What tensor2tensor 1.15.7's datagen writes for its own sentiment and GLUE-style classification
problems (reference test data for ``t2t_repro/t2t_compat/sentiment_problems.py`` and
``glue_problems.py``).

The corpora are not ours to ship: this writes SYNTHETIC ones (toy sentences, fixed seed) under
T2T's archive and file names into ``<out>/tmp``, one per T2T url: ``aclImdb_v1.tar.gz``,
``SST-2.zip``, ``CoLA.zip``, ``MRPC/`` (the two SentEval files and ``dev_ids.tsv``),
``QNLI.zip``, ``QQP.zip``, ``RTE.zip``, ``WNLI.zip``, ``SciTailV1.1.zip``, ``SNLI.zip``,
``MNLI.zip``, ``yelp_review_polarity_csv.tgz`` and ``yelp_review_full_csv.tgz`` (archives with
fixed member times), with the rows T2T's readers skip or fail on where a real file has them
(headers, SNLI's ``-`` gold label, a short QQP row, CRLF line ends). Then, for each problem
(``PROBLEMS``), it runs T2T's datagen as ``bin/t2t_datagen.py`` does (seeds 429459, then
``problem.generate_data(data_dir, tmp_dir, None)``) on a copy of that folder and writes
``<out>/t2t_1.15.7_classification.json``: the files written (the shards by their counts), the
vocabulary's sha256 (the file itself under ``<out>/vocab/<problem>/``), each shard's record
count and the sha256 of the records' ids, shard by shard (T2T serializes a record's feature map
in the process's hash order, so records are compared by their ids), each split's samples
(``generate_samples``) and encoded records as sha256s, in order and sorted (IMDB's order is
``os.listdir``'s, which differs between file systems), the problem hparams, ``eval_metrics()``,
class labels and task id. Also the names T2T registers in each of the 13 modules.
``multi_nli_shared_vocab`` reads LM1B's vocabulary (``use_vocab_from_other_problem``): the file
``sci_tail_shared_vocab`` writes under that name is placed in its data dir first. In T2T's venv
(README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_classification_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_classification_reference
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000  # tar members' mtime: the same bytes on every run
ZIP_DATE = (2020, 9, 13, 12, 0, 0)
WORDS = (
    "the a cat dog film movie plot actor scene river house old new good bad great dull "
    "sees likes hates near under quite very not never café naïve story ending music "
    "question answer man woman child plays runs sleeps $5 tickets"
).split()
LM1B_VOCAB = "vocab.languagemodel_lm1b32k.32768.subwords"
# T2T's modules, then each registered problem of them that this project provides.
MODULES = (
    "imdb sst_binary yelp_polarity yelp_full cola mrpc qnli quora_qpairs rte scitail "
    "stanford_nli multinli wnli"
).split()
PROBLEMS = [
    "sentiment_imdb",
    "sentiment_imdb_characters",
    "sentiment_sst_binary",
    "sentiment_sst_binary_characters",
    "sentiment_yelp_polarity",
    "sentiment_yelp_polarity_characters",
    "sentiment_yelp_full",
    "sentiment_yelp_full_characters",
    "cola",
    "cola_characters",
    "msr_paraphrase_corpus",
    "msr_paraphrase_corpus_characters",
    "question_nli",
    "question_nli_characters",
    "quora_question_pairs",
    "quora_question_pairs_characters",
    "rte",
    "rte_characters",
    "sci_tail",
    "sci_tail_characters",
    "sci_tail_shared_vocab",  # before multi_nli_shared_vocab: its vocab file is LM1B's name
    "stanford_nli",
    "stanford_nli_characters",
    "stanford_nli_shared_vocab",
    "multi_nli",
    "multi_nli_characters",
    "multi_nli_shared_vocab",
    "multi_nli_text2text",
    "winograd_nli",
    "winograd_nli_characters",
]


def sentence(rng: random.Random, low: int = 3, high: int = 9) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + rng.choice([".", "!", "?", ""])


def lines(rows: list[str], end: str = "\n") -> bytes:
    return "".join(row + end for row in rows).encode("utf-8")


def write_tar(path: str, members: dict[str, bytes]) -> None:
    """A .tar.gz of ``members``, the same bytes on every run (no time in the gzip header)."""
    with open(path, "wb") as f, gzip.GzipFile("", "wb", fileobj=f, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), DATE
                tar.addfile(info, io.BytesIO(data))


def write_zip(path: str, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=ZIP_DATE), data)


def imdb(rng, d: str) -> None:
    members = {}
    for split, n in (("train", 14), ("test", 6)):
        for label in ("pos", "neg"):
            for i in range(n):
                doc = "<br /><br />".join(sentence(rng) for _ in range(rng.randint(1, 3)))
                members[f"aclImdb/{split}/{label}/{i}_{rng.randint(1, 10)}.txt"] = (
                    f" {doc} \n".encode()
                )
    members["aclImdb/imdb.vocab"] = lines(WORDS)
    write_tar(f"{d}/aclImdb_v1.tar.gz", members)


def yelp(rng, d: str, folder: str, classes: int) -> None:
    def csv(n: int) -> bytes:
        rows = []
        for _ in range(n):
            text = sentence(rng) + '\\n"' + sentence(rng) + '" ' + sentence(rng)
            rows.append(f'"{rng.randint(1, classes)}","{text.replace(chr(34), chr(34) * 2)}"')
        return lines(rows)

    members = {f"{folder}/readme.txt": b"synthetic\n", f"{folder}/train.csv": csv(24)}
    members[f"{folder}/test.csv"] = csv(8)
    write_tar(f"{d}/{folder}.tgz", members)


def glue(rng, d: str) -> None:
    def two(n: int, labels: list[str]) -> list[tuple[str, str, str]]:
        return [(sentence(rng), sentence(rng), rng.choice(labels)) for _ in range(n)]

    sst = {}
    for split, n in (("train", 30), ("dev", 8)):
        rows = ["sentence\tlabel"] + [f"{sentence(rng)} \t{rng.randint(0, 1)}" for _ in range(n)]
        sst[f"SST-2/{split}.tsv"] = lines(rows)
    sst["SST-2/test.tsv"] = lines(["index\tsentence", f"0\t{sentence(rng)}"])
    write_zip(f"{d}/SST-2.zip", sst)
    cola = {}
    for split, n in (("train", 30), ("dev", 8)):
        rows = []
        for i in range(n):
            label = rng.randint(0, 1)
            rows.append(f"src{i % 3}\t{label}\t{'' if label else '*'}\t{sentence(rng)}")
        cola[f"CoLA/{split}.tsv"] = lines(rows)
    write_zip(f"{d}/CoLA.zip", cola)
    for name, labels, header in (
        ("QNLI", ["entailment", "not_entailment"], "index\tquestion\tsentence\tlabel"),
        ("RTE", ["entailment", "not_entailment"], "index\tsentence1\tsentence2\tlabel"),
        ("WNLI", ["0", "1"], "index\tsentence1\tsentence2\tlabel"),
    ):
        members = {}
        for split, n, end in (("train", 30, "\n"), ("dev", 8, "\r\n")):
            rows = [header] + [f"{i}\t{a}\t{b}\t{c}" for i, (a, b, c) in enumerate(two(n, labels))]
            members[f"{name}/{split}.tsv"] = lines(rows, end)
        write_zip(f"{d}/{name}.zip", members)
    qqp = {}
    for split, n in (("train", 30), ("dev", 8)):
        rows = ["id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"]
        rows += [
            f"{i}\t{2 * i}\t{2 * i + 1}\t{a}\t{b}\t{c}" for i, (a, b, c) in enumerate(two(n, "01"))
        ]
        rows.insert(5, f"99\t198\t{sentence(rng)}")  # a short row, which T2T skips
        qqp[f"QQP/{split}.tsv"] = lines(rows)
    write_zip(f"{d}/QQP.zip", qqp)
    scitail = {}
    for split, n in (("train", 30), ("dev", 8)):
        rows = [f"{a}\t{b}\t{c}" for a, b, c in two(n, ["entails", "neutral"])]
        scitail[f"SciTailV1.1/tsv_format/scitail_1.0_{split}.tsv"] = lines(rows)
    scitail["SciTailV1.1/README.txt"] = b"synthetic\n"
    write_zip(f"{d}/SciTailV1.1.zip", scitail)
    nli = ["contradiction", "entailment", "neutral"]
    snli = {}
    for split, n, extra in (("train", 30, 1), ("dev", 8, 5)):
        head = "gold_label\ts1_binary\ts2_binary\ts1_parse\ts2_parse\tsentence1\tsentence2"
        rows = [head + "\tcaptionID\tpairID" + "".join(f"\tlabel{k + 1}" for k in range(extra))]
        for i, (a, b, c) in enumerate(two(n, nli)):
            gold = "-" if i % 7 == 3 else c  # no gold label: T2T skips the row
            rows.append(f"{gold}\t( {a} )\t( {b} )\t(ROOT {a})\t(ROOT {b})\t{a}\t{b}\tc{i}\tp{i}")
            rows[-1] += f"\t{c}" * extra
        snli[f"snli_1.0/snli_1.0_{split}.txt"] = lines(rows)
    write_zip(f"{d}/SNLI.zip", snli)
    mnli = {}
    for split, n, extra in (("train", 30, 1), ("dev_matched", 8, 5), ("dev_mismatched", 4, 5)):
        head = "index\tpromptID\tpairID\tgenre\ts1_binary\ts2_binary\ts1_parse\ts2_parse"
        rows = [head + "\tsentence1\tsentence2" + "".join(f"\tl{k}" for k in range(extra))]
        rows[0] += "\tgold_label"
        for i, (a, b, c) in enumerate(two(n, nli)):
            row = f"{i}\t{i}\t{i}n\tfiction\t( {a} )\t( {b} )\t(ROOT {a})\t(ROOT {b})\t{a}\t{b}"
            rows.append(row + f"\t{rng.choice(nli)}" * extra + f"\t{c}")
        mnli[f"MNLI/{split}.tsv"] = lines(rows)
    write_zip(f"{d}/MNLI.zip", mnli)
    mrpc = os.path.join(d, "MRPC")
    os.makedirs(mrpc)
    pairs = {}
    for split, n in (("train", 30), ("test", 10)):
        rows = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        pairs[split] = [(str(1000 + 10 * i), str(1001 + 10 * i)) for i in range(n)]
        for (id1, id2), (a, b, c) in zip(pairs[split], two(n, "01"), strict=True):
            rows.append(f"{c}\t{id1}\t{id2}\t{a}\t{b}")
        with open(os.path.join(mrpc, f"msr_paraphrase_{split}.txt"), "wb") as f:
            f.write(lines(rows, "\r\n"))
    with open(os.path.join(mrpc, "dev_ids.tsv"), "wb") as f:
        f.write(lines([f"{a}\t{b}" for a, b in pairs["train"][::4]], "\r\n"))


def write_corpora(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rng = random.Random(2019)
    imdb(rng, tmp)
    glue(rng, tmp)
    yelp(rng, tmp, "yelp_review_polarity_csv", 2)
    yelp(rng, tmp, "yelp_review_full_csv", 5)


def shard_ids(tf, path: str) -> list[list[list[int]]]:
    """Each record's [inputs ids, targets ids], in file order."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def shard_counts(shards: dict) -> dict:
    """Each split's record counts, shard by shard (``<name>-<split>-NNNNN-of-MMMMM``)."""
    counts: dict = {}
    for name in sorted(shards):
        counts.setdefault(name.rsplit("-", 4)[-4], []).append(len(shards[name]))
    return counts


def digest(value) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_facts(problem, data_dir: str, tmp_dir: str, shards: dict) -> dict:
    """Each split's samples (T2T's ``generate_samples``) and records, in order and as a
    multiset (IMDB's order is ``os.listdir``'s, which differs between file systems)."""
    facts = {}
    for entry in problem.dataset_splits:
        split = entry["split"]
        name = {"train": "train", "eval": "dev", "test": "test"}[split]
        samples = list(problem.generate_samples(data_dir, tmp_dir, split))
        records = [r for f, rs in sorted(shards.items()) if f"-{name}-" in f for r in rs]
        facts[name] = {
            "samples": len(samples),
            "samples_sha256": digest(samples),
            "sorted_samples_sha256": digest(sorted(json.dumps(s, sort_keys=True) for s in samples)),
            "first_sample": samples[0],
            "sorted_records_sha256": digest(sorted(records)),
        }
    return facts


def hparams_facts(problem, data_dir: str) -> dict:
    problem.get_feature_encoders(data_dir)
    hp = problem.get_hparams()
    return {
        "input_space_id": int(hp.input_space_id),
        "target_space_id": int(hp.target_space_id),
        "vocab_size": dict(hp.vocab_size),
        "modality": dict(hp.modality),
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": int(hp.stop_at_eos),
        "batch_size_multiplier": hp.batch_size_multiplier,
    }


def run_problem(tf, np, registry, name: str, tmp_dir: str, out: str) -> dict:
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    if name == "multi_nli_shared_vocab":  # LM1B's vocabulary, as a user would have it
        shutil.copy(os.path.join(out, "vocab", "sci_tail_shared_vocab", LM1B_VOCAB), data_dir)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
    random.seed(SEED)
    np.random.seed(SEED)
    problem = registry.problem(name)
    problem.generate_data(data_dir, scratch, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if f.startswith(name)}
    counts = shard_counts(shards)
    assert sorted(shards) == sorted(  # T2T's shard names, which the test makes from the counts
        f"{name}-{split}-{i:05d}-of-{len(n):05d}"
        for split, n in counts.items()
        for i in range(len(n))
    )
    vocab_file = problem.vocab_filename if problem.vocab_type != "character" else None
    vocab_sha = None
    if vocab_file:  # T2T writes no file of a character vocabulary
        with open(os.path.join(data_dir, vocab_file), "rb") as f:
            vocab_sha = hashlib.sha256(f.read()).hexdigest()
        keep = os.path.join(out, "vocab", name)
        os.makedirs(keep, exist_ok=True)
        shutil.copy(os.path.join(data_dir, vocab_file), keep)
    facts = {
        "class": type(problem).__name__,
        "other_files": [f for f in files if f not in shards],  # the shards: shard_records
        "vocab_file": vocab_file,
        "vocab_sha256": vocab_sha,
        "shard_records": counts,
        "records_sha256": digest(shards),
        "splits": split_facts(problem, data_dir, scratch, shards),
        "problem_hparams": hparams_facts(problem, data_dir),
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_type": problem.vocab_type,
        "approx_vocab_size": problem.approx_vocab_size,
        "dataset_splits": [dict(s) for s in problem.dataset_splits],
        "task_id": problem.task_id,
        "tmp_files_after": sorted(os.listdir(scratch)),
    }
    if hasattr(problem, "num_classes"):
        facts["num_classes"] = problem.num_classes
        facts["class_labels"] = problem.class_labels(data_dir)
    shutil.rmtree(work)
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, vocab/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import importlib

    import numpy as np
    import tensorflow as tf
    from tensor2tensor.utils import registry

    for module in MODULES:  # registers the problems
        importlib.import_module(f"tensor2tensor.data_generators.{module}")
    tmp_dir = os.path.join(args.out, "tmp")
    write_corpora(tmp_dir)
    shutil.rmtree(os.path.join(args.out, "vocab"), ignore_errors=True)
    summary = {"random_seed": SEED, "problems": {}}
    for name in PROBLEMS:
        summary["problems"][name] = facts = run_problem(tf, np, registry, name, tmp_dir, args.out)
        print(name, sum(map(sum, facts["shard_records"].values())), "records")
    summary["registered"] = {
        module: sorted(
            n
            for n in registry.list_base_problems()
            if type(registry.problem(n)).__module__.endswith(f".{module}")
        )
        for module in MODULES
    }
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    path = os.path.join(args.out, "t2t_1.15.7_classification.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
