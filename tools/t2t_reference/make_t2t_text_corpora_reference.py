"""What tensor2tensor 1.15.7's datagen writes for its LAMBADA, enwik8, CNN/Daily Mail, dialog
and SQuAD problems (reference test data for ``t2t_repro/t2t_compat/lambada_problems.py``,
``enwik8_problems.py``, ``summarization_problems.py``, ``dialog_corpora.py`` and
``squad_problems.py``).

The corpora are not ours to ship: this writes SYNTHETIC ones (toy words, fixed seed) under
T2T's archive and file names into ``<out>/<corpus>/``: ``tmp/`` (what T2T reads from
--tmp_dir) or, for the dialog problems, ``raw_data*/`` (what T2T reads beside --data_dir).
Archives have fixed member times, gzip a fixed mtime, so the bytes repeat. Then it runs each
problem's datagen as ``bin/t2t_datagen.py`` does (seeds 429459, then
``problem.generate_data(data_dir, tmp_dir, None)``) and writes ``<out>/t2t_1.15.7_text.json``:
the files written, the vocabulary's sha256, each shard's record count and the sha256 of its
records' ids (every feature's: the SQuAD problems' ``context`` too), the problem hparams and
eval metrics. ``enwik8_l65k`` also runs on a corpus longer than its 10M dev and test
characters (``enwik8_big``, made here, not stored): there
each split's example count and the ids of its first and last examples are kept. In T2T's
venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_text_corpora_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_text_corpora_reference
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
DATE = 1_600_000_000  # archive members' mtime
WORDS = "the a cat dog house river sees likes small old red near don't i'm it's you".split()
ODD = ["Hello,", "WORLD!", "well...", "'cause", "isn't", "ok?", "café", "x-ray", "(yes)"]
CORPORA = {  # corpus folder: its problems
    "lambada": "lambada_lm lambada_lm_control lambada_rc lambada_rc_control",
    "enwik8": "enwik8_l65k",
    "cnn_dailymail": "summarize_cnn_dailymail32k",
    "squad": "squad_text2text squad squad_concat squad_concat_positioned",
    "cornell": "dialog_cornell32k",
    "dailydialog": "dialog_dailydialog16k",
    "personachat": "dialog_personachat16k",
    "opensubtitles": " ".join(
        f"dialog_opensubtitles64k{y}" for y in (2009, 2011, 2012, 2013, 2016, 2018)
    ),
}


def sentence(rng: random.Random, lo: int = 3, hi: int = 10) -> str:
    pool = WORDS * 3 + ODD
    return " ".join(rng.choice(pool) for _ in range(rng.randint(lo, hi)))


def write_tar(path: str, members: dict, gz: bool = True) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), DATE
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    with open(path, "wb") as f:
        f.write(gzip.compress(data, mtime=DATE) if gz else data)


def tar_bytes(members: dict) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        write_tar(os.path.join(d, "t"), members, gz=False)
        with open(os.path.join(d, "t"), "rb") as f:
            return f.read()


def write_zip(path: str, members: dict) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 9, 13, 12, 0, 0)), data)


def lines(texts) -> bytes:
    return "".join(t + "\n" for t in texts).encode("utf-8")


def folder(out: str, *parts: str) -> str:
    path = os.path.join(out, *parts)
    os.makedirs(path, exist_ok=True)
    return path


def write_corpora(out: str) -> None:
    rng = random.Random(2020)
    d = folder(out, "lambada", "tmp")
    vocab = [f"{w}\t{100 - i}" for i, w in enumerate(WORDS[:12] + ODD[:4])]
    novels = tar_bytes(  # one novel: T2T's glob order of several is the file system's
        {"train-novels/Romance/novel.txt": lines(sentence(rng) for _ in range(40))}
    )
    write_tar(
        f"{d}/lambada-dataset.tar.gz",
        {
            "lambada-vocab-2.txt": lines(vocab),
            "train-novels.tar": novels,
            "lambada_development_plain_text.txt": lines(sentence(rng) for _ in range(6)),
            "lambada_test_plain_text.txt": lines(sentence(rng) for _ in range(5)),
            "lambada_control_test_data_plain_text.txt": lines(sentence(rng) for _ in range(4)),
        },
    )
    d = folder(out, "enwik8", "tmp")  # shorter than 5M characters: all of it is test
    text = "".join(sentence(rng, 20, 60) + "\n" for _ in range(420))
    write_zip(f"{d}/enwik8.zip", {"enwik8": text.encode("utf-8")})
    write_cnn_dailymail(rng, folder(out, "cnn_dailymail", "tmp"))
    write_squad(rng, folder(out, "squad", "tmp"))
    write_dialogs(rng, out)


def write_cnn_dailymail(rng: random.Random, d: str) -> None:
    urls = {split: [] for split in ("train", "val", "test")}
    stories = {"cnn": {}, "dailymail": {}}
    for i in range(60):
        source = "cnn" if i % 3 else "dailymail"
        url = f"http://www.{source}.com/2015/story-{i}.html"
        split = "train" if i < 44 else ("val" if i < 52 else "test")
        urls[split].append(url)
        if i % 13 == 5:
            continue  # listed, not there
        body = [sentence(rng) + rng.choice(["", ".", "!", '"', "\u201d"]) for _ in range(4)]
        body.insert(2, "")
        highlights = []
        if i % 11 != 3:  # no highlights: skipped
            for _ in range(rng.randint(1, 3)):
                highlights += ["@highlight", "", sentence(rng)]
        if i % 17 == 4:
            body = []  # highlights only: skipped
        name = hashlib.sha1(url.encode()).hexdigest() + ".story"
        text = "\r\n".join(body + [""] + highlights) if i % 5 == 0 else "\n".join(body + highlights)
        stories[source][f"{source}/stories/{name}"] = text.encode("utf-8")
    for source, members in stories.items():
        write_tar(f"{d}/{source}_stories.tgz", members)
    for split, listed in urls.items():
        with open(f"{d}/all_{split}.txt", "wb") as f:
            f.write(lines(listed))


def write_squad(rng: random.Random, d: str) -> None:
    for name, n in (("train-v1.1.json", 30), ("dev-v1.1.json", 6)):
        data = []
        for a in range(n // 3):
            paragraphs = []
            for _ in range(2):
                context = " " + sentence(rng, 12, 30) + " "
                qas = [
                    {
                        "id": f"q{a}{k}",
                        "question": sentence(rng) + "?",
                        "answers": [{"answer_start": 0, "text": " " + context.split()[k] + " "}],
                    }
                    for k in range(rng.randint(1, 2))
                ]
                paragraphs.append({"context": context, "qas": qas})
            article = {"paragraphs": paragraphs}
            if a % 2:
                article["title"] = f" Title {a} "
            data.append(article)
        with open(f"{d}/{name}", "w", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": data}, f)


def write_dialogs(rng: random.Random, out: str) -> None:
    # Cornell: 105 conversations (80 train, 10 dev, 10 test, 5 train again)
    movie_lines, conversations, n = [], [], 1000
    for c in range(105):
        ids = []
        for _ in range(rng.randint(2, 4)):
            n += 1
            ids.append(f"L{n}")
            movie_lines.append(f"L{n} +++$+++ u0 +++$+++ m0 +++$+++ BOB +++$+++ {sentence(rng)}")
        if c == 7:
            ids.insert(1, "L1045")
            movie_lines.append(f"L1045 +++$+++ u0 +++$+++ m0 +++$+++ AL +++$+++ {sentence(rng)}")
        conversations.append(f"u0 +++$+++ u1 +++$+++ m0 +++$+++ {ids!r}")
    base = "cornell movie-dialogs corpus"
    d = folder(out, "cornell", "raw_data")
    write_zip(
        f"{d}/cornell_movie_dialogs_corpus.zip",
        {
            f"{base}/movie_lines.txt": lines(movie_lines),
            f"{base}/movie_conversations.txt": lines(conversations),
        },
    )
    d = folder(out, "dailydialog", "raw_data")
    dialogs = [
        " __eou__ ".join(sentence(rng) for _ in range(rng.randint(1, 4))) + " __eou__"
        for _ in range(105)
    ]
    write_zip(
        f"{d}/ijcnlp_dailydialog.zip", {"ijcnlp_dailydialog/dialogues_text.txt": lines(dialogs)}
    )
    d = folder(out, "personachat", "raw_data")
    parts = {}
    for part, count in (("train", 95), ("valid", 12)):
        rows = []
        for k in range(count):
            for turn in range(1, rng.randint(2, 4) + 1):
                first = "__SILENCE__" if k % 9 == 2 and turn == 1 else sentence(rng)
                rows.append(f"{turn} {first}\t{sentence(rng)}\t\tcandidate|other")
        parts[f"{part}_none_original_no_cands.txt"] = lines(rows)
    write_tar(f"{d}/convai2.tar.gz", parts)
    d = folder(out, "opensubtitles", "raw_data_2009")
    members, path = {}, "OpenSubtitles/en"
    for k in range(4):  # one file a folder: T2T walks them in the file system's order
        body = ['<?xml version="1.0" encoding="utf-8"?>', '<document id="1">']
        for s in range(rng.randint(2, 5)):
            body.append(f'  <s id="{s + 1}">')
            for w, word in enumerate(sentence(rng).replace("'", "\\' ").split()):
                body.append(f'    <w id="{s + 1}.{w + 1}">{word}</w>')
            body.append("  </s>")
        body.append("</document>")
        members[f"{path}/{k}.xml"] = lines(body)
        path += f"/d{k}"
    write_zip(f"{d}/en.tar.gz", members)


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


def raw_folder(name: str, entry: str) -> str:
    """The stored raw folder's name for ``name``: OpenSubtitles' 2009 archive stands for
    every release (``raw_data_<year>``)."""
    if name.startswith("dialog_opensubtitles"):
        return entry.replace("2009", name[-4:])
    return entry


def run(name, corpus_dir, seed_all, registry, tf, hparam):
    """One problem's datagen in a scratch copy; its summary."""
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    os.makedirs(data_dir)
    os.makedirs(scratch)
    for entry in os.listdir(corpus_dir):  # tmp/ to --tmp_dir, raw_data*/ beside data_dir
        target = scratch if entry == "tmp" else os.path.join(work, raw_folder(name, entry))
        shutil.copytree(os.path.join(corpus_dir, entry), target, dirs_exist_ok=True)
    seed_all()
    problem = registry.problem(name)
    problem.generate_data(data_dir, scratch, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f}
    vocab_path = os.path.join(data_dir, problem.vocab_filename)
    vocab = b""
    if os.path.isfile(vocab_path):
        with open(vocab_path, "rb") as f:
            vocab = f.read()
    summary = {
        "files": files,
        "vocab_sha256": hashlib.sha256(vocab).hexdigest() if vocab else None,
        "records": {f: len(r) for f, r in shards.items()},
        "records_sha256": {f: ids_digest(r) for f, r in shards.items()},
        "tmp_files_after": sorted(os.listdir(scratch)),
        "hparams": problem_facts(problem, data_dir, hparam),
    }
    shutil.rmtree(work)
    print(name, sum(len(r) for r in shards.values()), "records", flush=True)
    return summary


def enwik8_big(registry, tmp_dir: str) -> dict:
    """enwik8_l65k's examples on 10,200,000 characters (a non-ASCII one among them)."""
    unit = "enwik8 text \u00e9t\u00e9 " * 50 + "\n"
    text = (unit * (10_200_000 // len(unit) + 1))[:10_200_000]
    write_zip(os.path.join(tmp_dir, "enwik8.zip"), {"enwik8": text.encode("utf-8")})
    problem, found = registry.problem("enwik8_l65k"), {}
    for split in ("train", "eval", "test"):  # T2T's DatasetSplit values
        samples = list(problem.generate_encoded_samples(None, tmp_dir, split))
        found[split] = {
            "count": len(samples),
            "first_last_sha256": ids_digest([samples[0]["targets"], samples[-1]["targets"]]),
            "last_length": len(samples[-1]["targets"]),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (corpora, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import (  # noqa: F401  (registers the problems)
        cnn_dailymail,
        dialog_cornell,
        dialog_dailydialog,
        dialog_opensubtitles,
        dialog_personachat,
        enwik8,
        lambada,
        squad,
    )
    from tensor2tensor.utils import hparam, registry

    def seed_all():
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, per problem
        random.seed(SEED)
        np.random.seed(SEED)

    for corpus in CORPORA:
        shutil.rmtree(os.path.join(args.out, corpus), ignore_errors=True)
    write_corpora(args.out)
    summary = {"random_seed": SEED, "problems": {}}
    for corpus, names in CORPORA.items():
        for name in names.split():
            found = run(name, os.path.join(args.out, corpus), seed_all, registry, tf, hparam)
            summary["problems"][name] = dict(found, corpus=corpus)
    with tempfile.TemporaryDirectory() as tmp_dir:
        summary["enwik8_big"] = enwik8_big(registry, tmp_dir)
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_text.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
